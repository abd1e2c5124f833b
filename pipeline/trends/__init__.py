"""Hardware trends: fits over the catalog, projected hardware, the moving frontier.

- fit: log-linear least squares of a metric against release year, with a seeded bootstrap
- catalog_fits: the fit of every catalog metric (`CatalogTrends`)
- project: a HardwareSpec extrapolated to a future year along the trends (pure)

The `trends` table's rows are `pipeline.io.trends` (columns in
`pipeline.io.columns.TRENDS_SCHEMA`).
"""
