//! `dss eval --out DIR` writes `report.svg`: exact match against median latency, one point
//! per condition, so the conditions of one run can be compared at a glance (the Grammar
//! Pruning paper's accuracy/latency view).

use crate::tokens::plot::{register_font, FONT};
use anyhow::{anyhow, Result};
use dss_eval::Report;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Draws the report's conditions into the SVG file `path`.
pub(crate) fn plot(path: &Path, report: &Report) -> Result<()> {
    register_font()?;
    let shown = path.display();
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    draw(&root, report).map_err(|e| anyhow!("{shown}: {e}"))?;
    root.present().map_err(|e| anyhow!("{shown}: {e}"))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let points: Vec<(&str, f64, f64)> = report
        .results
        .iter()
        .map(|(cond, r)| (cond.as_str(), r.p50_ms / 1000.0, r.em))
        .collect();
    let x_max = points.iter().map(|p| p.1).fold(0.0f64, f64::max).max(0.1) * 1.25;
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "{} ({} items, {}): exact match vs median latency",
                report.suite, report.items, report.model
            ),
            (FONT, 16),
        )
        .margin(14)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..x_max, 0.0..1.05)?;
    chart
        .configure_mesh()
        .x_desc("median latency per item (s)")
        .y_desc("exact match")
        .label_style((FONT, 13))
        .draw()?;
    chart.draw_series(
        points
            .iter()
            .map(|&(_, x, y)| Circle::new((x, y), 5, BLUE.filled())),
    )?;
    chart.draw_series(points.iter().map(|&(cond, x, y)| {
        Text::new(
            cond.to_string(),
            (x + x_max * 0.015, (y + 0.03).min(1.03)),
            (FONT, 14),
        )
    }))?;
    Ok(())
}
