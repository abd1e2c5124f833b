"""`dmlimits-trends`: fit the catalog's trends, print them beside Gholami et al., write the table.

    dmlimits-trends                          # print the fits
    dmlimits-trends --out outputs/dataset    # also write outputs/dataset/trends/part-<hash>.parquet
    dmlimits-trends --catalog my.csv         # your own accelerators.csv (same columns)

A bad catalog is one line on stderr (``dmlimits-trends: error: ...``) and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.catalog.load import CatalogError
from pipeline.identity import new_run_id
from pipeline.io.parquet import OutputError, check_writable
from pipeline.io.rows import Provenance
from pipeline.io.trends import write_trends
from pipeline.schema.projected import read_catalog, shipped_catalog
from pipeline.trends.catalog_fits import GHOLAMI_PER_TWO_YEARS, CatalogTrends, catalog_trends
from pipeline.trends.fit import CONFIDENCE

EXIT_BAD_INPUT = 2


def ratio(trends: CatalogTrends, metric: str, old_gpu: str, new_gpu: str) -> float:
    """new_gpu's value of `metric` over old_gpu's (KeyError if either lacks it)."""
    values = {p.gpu: p.value for p in trends.points[metric]}
    return values[new_gpu] / values[old_gpu]


def trend_lines(trends: CatalogTrends) -> list[str]:
    """The fits as a plain-text table, then the 2016-2022 capacity vs compute check."""
    pct = round(CONFIDENCE * 100)
    lines = [
        f"{'metric':34} {'n':>3} {'x/year':>7} {f'{pct}% interval':>15} {'x/2 years':>9} "
        f"{'doubling':>9}  Gholami et al. 2024 (x/2 years)"
    ]
    for name, pts in trends.points.items():
        fit = trends.fits.get(name)
        ref = GHOLAMI_PER_TWO_YEARS.get(name)
        if fit is None:
            lines.append(f"{name:34} {len(pts):>3}  (fewer than two releases: no fit)")
            continue
        doubling = fit.doubling_time_years
        lines.append(
            f"{name:34} {fit.n_points:>3} {fit.growth_per_year:>7.3f} "
            f"{f'[{fit.growth_per_year_low:.3f}, {fit.growth_per_year_high:.3f}]':>15} "
            f"{fit.growth_per_two_years:>9.2f} "
            f"{(f'{doubling:.2f} y' if abs(doubling) < 1e3 else 'flat'):>9}  "
            f"{'' if ref is None else f'{ref:.1f}'}"
        )
    try:
        capacity = ratio(trends, "hbm_bytes", "p100_sxm2", "h100_sxm")
        compute = ratio(trends, "dense_16bit_flop_per_s", "p100_sxm2", "h100_sxm")
        lines.append(
            f"P100 (2016) -> H100 (2022): memory capacity x{capacity:.1f}, dense 16-bit "
            f"FLOP/s x{compute:.1f} (Gholami et al.: ~5x vs ~46x)"
        )
    except KeyError:
        pass
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point."""
    parser = argparse.ArgumentParser(
        prog="dmlimits-trends", description="Hardware trends fitted over the accelerator catalog."
    )
    parser.add_argument("--out", type=Path, default=None, help="dataset root for the trends table")
    parser.add_argument("--catalog", type=Path, default=None, help="an accelerators.csv")
    args = parser.parse_args(argv)
    try:
        catalog = shipped_catalog() if args.catalog is None else read_catalog(args.catalog)
        trends = catalog_trends(catalog)
        root = None if args.out is None else check_writable(args.out)
    except (CatalogError, OSError, OutputError) as err:
        print(f"dmlimits-trends: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for line in trend_lines(trends):
        print(line)
    if root is not None:
        path = write_trends(root, trends, Provenance(run_id=new_run_id()))
        print(f"trends -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
