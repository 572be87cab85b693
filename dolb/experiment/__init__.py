"""Pipeline files -> validated spec -> grid of cells; cell identity."""
