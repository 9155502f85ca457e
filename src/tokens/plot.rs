//! `--plot FILE.svg|FILE.png`: a histogram of the per-document dss/compact ratio, one panel
//! per tokenizer, with the median marked.
//!
//! plotters draws text with ab_glyph (pure Rust) from a font it is given: the first of the
//! file in `$DSS_PLOT_FONT`, the system's sans-serif font, or any other system font (found
//! by fontdb, which reads font folders and fontconfig's settings, not its library).

use super::report::Summary;
use anyhow::{anyhow, bail, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::OnceLock;

pub(crate) const FONT: &str = "sans-serif";

/// Register a font for plotters, once per process.
pub(crate) fn register_font() -> Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(find_and_register_font)
        .clone()
        .map_err(|e| anyhow!(e))
}

fn register(bytes: Vec<u8>) -> bool {
    // plotters keeps fonts for the whole process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font(FONT, FontStyle::Normal, bytes).is_ok()
}

fn find_and_register_font() -> Result<(), String> {
    if let Some(path) = std::env::var_os("DSS_PLOT_FONT") {
        let shown = Path::new(&path).display().to_string();
        let bytes = std::fs::read(&path).map_err(|e| format!("DSS_PLOT_FONT={shown}: {e}"))?;
        return if register(bytes) {
            Ok(())
        } else {
            Err(format!(
                "DSS_PLOT_FONT={shown}: not a TrueType/OpenType font"
            ))
        };
    }
    let mut db = fontdb::Database::new();
    db.load_system_fonts();
    let families = [
        fontdb::Family::SansSerif,
        fontdb::Family::Name("DejaVu Sans"),
        fontdb::Family::Name("Liberation Sans"),
        fontdb::Family::Name("Noto Sans"),
    ];
    let preferred = db.query(&fontdb::Query {
        families: &families,
        ..fontdb::Query::default()
    });
    let others = db
        .faces()
        .filter(|f| f.index == 0 && f.style == fontdb::Style::Normal)
        .map(|f| f.id);
    for id in preferred.into_iter().chain(others) {
        // plotters reads the first face of a file only.
        let bytes = db.with_face_data(id, |data, index| (index == 0).then(|| data.to_vec()));
        if let Some(Some(bytes)) = bytes {
            if register(bytes) {
                return Ok(());
            }
        }
    }
    Err(
        "no usable font found to draw the plot's text: install one (on Debian: \
         apt-get install fonts-dejavu-core) or set DSS_PLOT_FONT=/path/to/font.ttf"
            .to_string(),
    )
}

/// Draw the histogram(s) into `path`: `.svg` (SVG) or `.png` (bitmap).
pub(super) fn plot(path: &Path, summaries: &[Summary]) -> Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let size = (900, 420 * summaries.len().max(1) as u32);
    let shown = path.display();
    match ext.as_deref() {
        Some("svg") => {
            register_font()?;
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, summaries).map_err(|e| anyhow!("--plot {shown}: {e}"))?;
            root.present().map_err(|e| anyhow!("--plot {shown}: {e}"))
        }
        Some("png") => {
            register_font()?;
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, summaries).map_err(|e| anyhow!("--plot {shown}: {e}"))?;
            root.present().map_err(|e| anyhow!("--plot {shown}: {e}"))
        }
        _ => bail!("--plot {shown}: the file name must end in .svg or .png"),
    }
}

/// Bins `[lo, hi)` of equal width over the ratios (sorted ascending), with their counts.
fn bins(ratios: &[f64]) -> (f64, f64, Vec<(f64, f64, u32)>) {
    let (Some(&min), Some(&max)) = (ratios.first(), ratios.last()) else {
        return (0.0, 1.0, Vec::new());
    };
    let lo = (min * 20.0).floor() / 20.0;
    let hi = ((max * 20.0).floor() + 1.0) / 20.0;
    // About 2·√N bins: finer for larger corpora.
    let n = ((2.0 * (ratios.len() as f64).sqrt()).round() as usize).clamp(8, 80);
    let width = (hi - lo) / n as f64;
    let mut counts = vec![0u32; n];
    for &r in ratios {
        let i = (((r - lo) / width) as usize).min(n - 1);
        counts[i] += 1;
    }
    let bins = counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect();
    (lo, hi, bins)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    summaries: &[Summary],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let panels = root.split_evenly((summaries.len().max(1), 1));
    for (s, area) in summaries.iter().zip(&panels) {
        let mut ratios: Vec<f64> = s.ratios.iter().map(|r| r.ratio).collect();
        ratios.sort_by(f64::total_cmp);
        let (lo, hi, bins) = bins(&ratios);
        let top = bins.iter().map(|b| b.2).max().unwrap_or(0).max(1);
        let y_max = top + top / 10 + 1;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "dss / compact JSON tokens per document ({}, {} documents)",
                    s.tokenizer, s.documents
                ),
                (FONT, 20),
            )
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(lo..hi, 0u32..y_max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc("dss tokens / compact JSON tokens")
            .y_desc("documents")
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()?;
        chart.draw_series(bins.iter().map(|&(x0, x1, c)| {
            let mut bar = Rectangle::new([(x0, 0), (x1, c)], RGBColor(70, 130, 180).filled());
            // A pixel of space between bars.
            bar.set_margin(0, 0, 1, 0);
            bar
        }))?;
        if (lo..=hi).contains(&1.0) {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(1.0, 0), (1.0, y_max)],
                    BLACK.mix(0.4).stroke_width(1),
                )))?
                .label("1.0 = as long as compact JSON")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4).stroke_width(1))
                });
        }
        if let Some(m) = s.median_ratio {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(m, 0), (m, y_max)],
                    RED.stroke_width(2),
                )))?
                .label(format!("median {m:.3}"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::bins;

    #[test]
    fn bins_cover_every_ratio() {
        let ratios = [0.31, 0.42, 0.42, 0.5, 0.97];
        let (lo, hi, b) = bins(&ratios);
        assert!(lo <= 0.31 && hi > 0.97, "{lo} {hi}");
        assert_eq!(b.iter().map(|x| x.2).sum::<u32>(), 5);
        let (_, _, one) = bins(&[0.5]);
        assert_eq!(one.iter().map(|x| x.2).sum::<u32>(), 1);
        assert!(bins(&[]).2.is_empty());
    }
}
