"""Result store, tables, figures."""
