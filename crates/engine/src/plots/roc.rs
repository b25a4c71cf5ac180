//! ROC curves (false-positive rate, true-positive rate), one per series with its marker, the
//! chance diagonal, and the legend (with each curve's AUC) below the square.

use plotters::prelude::*;

use super::style::{self, Swatch, AXIS_FONT, GRID, TICK_FONT};

pub fn roc_curves(
    curves: &[(String, Vec<(f64, f64)>)],
    width: u32,
) -> Result<(String, (u32, u32)), String> {
    let legend: Vec<(String, Swatch)> = curves
        .iter()
        .enumerate()
        .map(|(i, (n, _))| {
            let c = style::SERIES_COLOURS[i % style::SERIES_COLOURS.len()];
            (n.clone(), Swatch::Line(c, i))
        })
        .collect();
    // the plot square, its axes' labels, then the legend
    let plot = width.saturating_sub(62 + 14 + 4) + 8 + 40;
    let height = plot + style::legend_height(&legend, width);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (area, below) = root.split_vertically(plot);
        let mut chart = ChartBuilder::on(&area)
            .margin_top(8)
            // the rotated axis title's glyphs reach a little left of its anchor
            .margin_left(4)
            .margin_right(14)
            .x_label_area_size(40)
            .y_label_area_size(62)
            .build_cartesian_2d(0f64..1f64, 0f64..1f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&|x| super::bars::number(*x))
            .y_label_formatter(&|y| super::bars::number(*y))
            .x_desc("false-positive rate")
            .y_desc("true-positive rate")
            .label_style(TICK_FONT)
            .axis_desc_style(AXIS_FONT)
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(LineSeries::new(
                vec![(0.0, 0.0), (1.0, 1.0)],
                BLACK.mix(0.4).stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        for (i, (_, pts)) in curves.iter().enumerate() {
            let colour = style::SERIES_COLOURS[i % style::SERIES_COLOURS.len()];
            // rates: finite, within the square (a point far outside it has no pixel)
            let pts: Vec<(f64, f64)> = pts
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| (x.clamp(0.0, 1.0), y.clamp(0.0, 1.0)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            // markers along the curve (a dozen at most): series apart in grey-scale print too
            let step = (pts.len() / 12).max(1);
            chart
                .draw_series(
                    pts.iter()
                        .step_by(step)
                        .map(|p| EmptyElement::at(*p) + style::marker(i, (0, 0), colour)),
                )
                .map_err(|e| e.to_string())?;
        }
        style::draw_legend(&below, &legend)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok((svg, (width, height)))
}
