//! Box plots by Tukey's rule (`stats::tukey_box`), horizontal: the box from the first to the
//! third quartile with the median, whiskers at the most extreme data points within 1.5 IQR, the
//! points beyond as outliers. Non-finite values are not data and are left out.

use plotters::prelude::*;

use super::axis::{in_units, tickable};
use super::style::{self, AXIS_FONT, GRID, TICK_FONT};

/// The value axis over data from `lo` to `hi` (finite): a little room on both sides, never
/// below zero when the data are not, and finite however extreme the data (the room is computed
/// in halves, so `f64::MAX` cannot overflow it).
pub fn box_axis(lo: f64, hi: f64) -> (f64, f64) {
    let span = hi / 2.0 - lo / 2.0;
    let pad = if span > 0.0 {
        span * 0.1
    } else {
        (lo.abs() * 0.05).max(0.5)
    };
    let mut bottom = lo - pad;
    if lo >= 0.0 && bottom < 0.0 {
        bottom = 0.0;
    }
    let top = hi + pad;
    let clamp = |x: f64| x.clamp(-f64::MAX, f64::MAX);
    (clamp(bottom), clamp(top))
}

/// The power of ten extreme data are drawn in, so the axis spans comfortable numbers (1 to
/// 10,000 units); 0 for data of ordinary size (magnitudes from 0.001 to a billion) and zero.
pub fn display_exponent(magnitude: f64) -> i32 {
    if magnitude == 0.0 || !magnitude.is_finite() || (1e-3..=1e9).contains(&magnitude) {
        return 0;
    }
    magnitude.log10().floor() as i32
}

const PITCH: u32 = 30;

/// Box plots of `groups` (name, values), top to bottom, with the value axis titled `value_desc`.
pub fn box_plots(
    groups: &[(String, Vec<f64>)],
    value_desc: &str,
    width: u32,
) -> Result<(String, (u32, u32)), String> {
    let boxes: Vec<(&str, crate::stats::TukeyBox)> = groups
        .iter()
        .filter_map(|(g, v)| crate::stats::tukey_box(v).ok().map(|b| (g.as_str(), b)))
        .collect();
    let (lo, hi) = boxes
        .iter()
        .flat_map(|(_, b)| {
            [b.lower_whisker, b.upper_whisker]
                .into_iter()
                .chain(b.outliers.iter().copied())
        })
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, z), x| {
            (a.min(x), z.max(x))
        });
    let (bottom, top) = if lo.is_finite() {
        box_axis(lo, hi)
    } else {
        (0.0, 1.0)
    };
    // the axis's arithmetic (plotters' ticks) needs comfortable magnitudes: extreme data are
    // drawn in units of a power of ten, which the axis title says
    let exponent = display_exponent(bottom.abs().max(top.abs()));
    let scaled = |x: f64| in_units(x, exponent);
    let non_negative = !lo.is_finite() || lo >= 0.0;
    let (bottom, top) = tickable(scaled(bottom), scaled(top), non_negative);
    let title = if exponent == 0 {
        value_desc.to_owned()
    } else {
        format!("{value_desc} (×1e{exponent})")
    };
    let labels: Vec<String> = boxes.iter().map(|(g, _)| (*g).to_owned()).collect();
    let n = boxes.len().max(1);
    let label_area = style::label_area(&labels, width);
    let height = 8 + PITCH * n as u32 + 40;
    let colour = style::SERIES_COLOURS[0];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(14)
            .x_label_area_size(40)
            .y_label_area_size(label_area)
            .build_cartesian_2d(bottom..top, (0..n - 1).into_segmented())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_labels(6)
            .x_label_formatter(&|x| super::bars::number(*x))
            .y_labels(n)
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(j) if *j < n => {
                    labels.get(n - 1 - j).cloned().unwrap_or_default()
                }
                _ => String::new(),
            })
            .x_desc(title.as_str())
            .label_style(TICK_FONT)
            .axis_desc_style(AXIS_FONT)
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, (_, b)) in boxes.iter().enumerate() {
            let j = super::bars::band(n, i);
            let at = |x: f64| (x, SegmentValue::CenterOf(j));
            let (q1, q3, med) = (scaled(b.q1), scaled(b.q3), scaled(b.median));
            let (lw, uw) = (scaled(b.lower_whisker), scaled(b.upper_whisker));
            // the box: half the band's height
            let pad = PITCH / 4;
            let corners = [
                (q1, SegmentValue::Exact(j)),
                (q3, SegmentValue::Exact(j + 1)),
            ];
            let mut body = Rectangle::new(corners.clone(), colour.mix(0.25).filled());
            body.set_margin(pad, pad, 0, 0);
            let mut edge = Rectangle::new(corners, colour.stroke_width(1));
            edge.set_margin(pad, pad, 0, 0);
            chart.draw_series([body, edge]).map_err(|e| e.to_string())?;
            let line = |from: f64, to: f64| PathElement::new(vec![at(from), at(to)], colour);
            chart
                .draw_series([line(q3, uw), line(lw, q1)])
                .map_err(|e| e.to_string())?;
            let tick = |x: f64, half: i32, w: u32| {
                EmptyElement::at(at(x))
                    + PathElement::new(vec![(0, -half), (0, half)], colour.stroke_width(w))
            };
            chart
                .draw_series([
                    tick(uw, 5, 1),
                    tick(lw, 5, 1),
                    tick(med, (PITCH / 4) as i32, 2),
                ])
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(
                    b.outliers
                        .iter()
                        .map(|x| Circle::new(at(scaled(*x)), 2, colour.stroke_width(1))),
                )
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok((svg, (width, height)))
}
