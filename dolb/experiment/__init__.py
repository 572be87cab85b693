"""Pipeline files -> validated spec -> grid of cells; seeding; cell identity."""
