//! Horizontal bars: stacked (items by naturalness category, per level, operator or tool) and
//! grouped (a tool's rates side by side). Groups run top to bottom in the order given; the
//! legend sits below the axis.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, Swatch, AXIS_FONT, GRID, OUTLINE, TICK_FONT};

/// A count or share axis from `lo` to `hi`: round ends and a whole number of round steps.
pub fn value_axis(lo: f64, hi: f64) -> (f64, f64, usize) {
    // ends plotters can tick in bounded time, whatever the data (sums of huge values are
    // infinite, values a denormal apart have no span)
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    let (lo, hi) = (finite(lo), finite(hi));
    let (bottom, top, ticks) = round_axis(lo, hi);
    let magnitude = bottom.abs().max(top.abs());
    if bottom.is_finite()
        && top.is_finite()
        && top > bottom
        && (top - bottom) > magnitude * 1e-9
        && (2..=12).contains(&ticks)
    {
        return (bottom, top, ticks);
    }
    let (bottom, top) = super::axis::tickable(lo, hi, lo >= 0.0);
    (bottom, top, 6)
}

/// [`value_axis`] by round steps, for ordinary data.
fn round_axis(lo: f64, hi: f64) -> (f64, f64, usize) {
    let span = (hi - lo).max(1e-12);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let bottom = (lo / step).floor() * step;
    let top = (hi / step).ceil() * step;
    let top = if top <= bottom { bottom + step } else { top };
    (
        bottom,
        top,
        (((top - bottom) / step).round() as usize).saturating_add(1),
    )
}

/// The share of a group's band its bar takes.
const BAR: f64 = 0.64;
/// Drawing units per group.
const PITCH: u32 = 22;
/// Drawing units per bar of a group of several: the height of its number.
const SUB_BAR: u32 = 13;

struct Frame {
    width: u32,
    height: u32,
    label_area: u32,
}

fn frame(labels: &[String], groups_height: u32, legend: &[(String, Swatch)], width: u32) -> Frame {
    let label_area = style::label_area(labels, width);
    let height = 8 + groups_height + 40 + style::legend_height(legend, width);
    Frame {
        width,
        height,
        label_area,
    }
}

/// Stacked horizontal bars: `groups` (name, one value per series), `series` (name, colour).
pub fn stacked(
    groups: &[(String, Vec<f64>)],
    series: &[(String, RGBColor)],
    value_desc: &str,
    width: u32,
) -> Result<(String, (u32, u32)), String> {
    let legend = style::fill_legend(series);
    let labels: Vec<String> = groups.iter().map(|(g, _)| g.clone()).collect();
    let n = groups.len().max(1);
    let f = frame(&labels, PITCH * n as u32, &legend, width);
    // a sum of huge values is infinite: the axis ends at the largest finite number then
    let max = groups
        .iter()
        .map(|(_, v)| v.iter().filter(|x| x.is_finite()).sum::<f64>())
        .map(|sum| if sum.is_nan() { 0.0 } else { sum.min(f64::MAX) })
        .fold(0.0, f64::max)
        .max(1.0);
    let (_, top, ticks) = value_axis(0.0, max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (f.width, f.height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, below) = root.split_vertically(f.height - style::legend_height(&legend, width));
        let mut chart = axes(&plot, &f, (0.0, top, ticks), &labels, value_desc)?;
        for (s, (_, colour)) in series.iter().enumerate() {
            for (i, (_, v)) in groups.iter().enumerate() {
                let base: f64 = v[..s.min(v.len())].iter().filter(|x| x.is_finite()).sum();
                let value = v.get(s).copied().filter(|x| x.is_finite()).unwrap_or(0.0);
                if value <= 0.0 {
                    continue;
                }
                let j = band(n, i);
                let pad = ((1.0 - BAR) / 2.0 * f64::from(PITCH)).round() as u32;
                // within the axis (a bar past its end has no pixel to end on)
                let corners = [
                    (base.min(top), SegmentValue::Exact(j)),
                    ((base + value).min(top), SegmentValue::Exact(j + 1)),
                ];
                let mut fill = Rectangle::new(corners.clone(), colour.filled());
                fill.set_margin(pad, pad, 0, 0);
                let mut edge = Rectangle::new(corners, OUTLINE.stroke_width(1));
                edge.set_margin(pad, pad, 0, 0);
                chart.draw_series([fill, edge]).map_err(|e| e.to_string())?;
            }
        }
        style::draw_legend(&below, &legend)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok((svg, (f.width, f.height)))
}

/// Grouped horizontal bars: per group, one bar per series (a missing value draws none); the
/// axis takes in zero and negative values.
pub fn grouped(
    groups: &[(String, Vec<Option<f64>>)],
    series: &[(String, RGBColor)],
    value_desc: &str,
    width: u32,
) -> Result<(String, (u32, u32)), String> {
    let legend = style::fill_legend(series);
    let labels: Vec<String> = groups.iter().map(|(g, _)| g.clone()).collect();
    let n = groups.len().max(1);
    let k = series.len().max(1);
    let pitch = PITCH / 2 + SUB_BAR * k as u32;
    let f = frame(&labels, pitch * n as u32, &legend, width);
    let values = groups
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|x| x.is_finite());
    let (lo, hi) = values.fold((0.0f64, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    // room beyond the longest bars for their numbers
    // (in halves, and kept finite: extreme values must not make the axis infinite)
    let room = (0.36 * (hi / 2.0 - lo / 2.0)).max(1e-9);
    let lo = if lo < 0.0 {
        (lo - room).max(-f64::MAX)
    } else {
        lo
    };
    let (bottom, top, ticks) = value_axis(lo, (hi + room).min(f64::MAX));
    let (bottom_end, top_end) = (bottom, top);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (f.width, f.height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, below) = root.split_vertically(f.height - style::legend_height(&legend, width));
        let mut chart = axes(&plot, &f, (bottom, top, ticks), &labels, value_desc)?;
        let pad = (pitch - SUB_BAR * k as u32) / 2;
        for (i, (_, v)) in groups.iter().enumerate() {
            let j = band(n, i);
            if v.iter().all(|x| x.is_none_or(|x| !x.is_finite())) {
                // no rate to compare: said, not left blank
                let style = TextStyle::from(TICK_FONT.into_font())
                    .color(&OUTLINE)
                    .pos(Pos::new(HPos::Left, VPos::Center));
                chart
                    .draw_series([Text::new(
                        "no value",
                        (0.0, SegmentValue::CenterOf(j)),
                        style,
                    )])
                    .map_err(|e| e.to_string())?;
                continue;
            }
            for (s, (_, colour)) in series.iter().enumerate() {
                let Some(value) = v.get(s).copied().flatten().filter(|x| x.is_finite()) else {
                    continue;
                };
                // within the axis (a bar past its end has no pixel to end on)
                let value = value.clamp(bottom_end, top_end);
                // series top to bottom, as the legend reads
                let top = pad + SUB_BAR * s as u32;
                let bottom = pitch - top - SUB_BAR;
                let corners = [
                    (0.0, SegmentValue::Exact(j)),
                    (value, SegmentValue::Exact(j + 1)),
                ];
                if value != 0.0 {
                    // a zero has no bar (an empty rectangle is invalid SVG): its value says it
                    let mut fill = Rectangle::new(corners.clone(), colour.filled());
                    fill.set_margin(top, bottom, 0, 0);
                    let mut edge = Rectangle::new(corners, OUTLINE.stroke_width(1));
                    edge.set_margin(top, bottom, 0, 0);
                    chart.draw_series([fill, edge]).map_err(|e| e.to_string())?;
                }
                // the value at the bar's end (a zero drop has no bar to see)
                let anchor = if value < 0.0 { HPos::Right } else { HPos::Left };
                let offset = if value < 0.0 { -3 } else { 3 };
                let y_px = (top + SUB_BAR / 2) as i32 - pitch as i32 / 2;
                let label = EmptyElement::at((value, SegmentValue::CenterOf(j)))
                    + Text::new(
                        number_1(value),
                        (offset, y_px),
                        TextStyle::from(TICK_FONT.into_font())
                            .color(&OUTLINE)
                            .pos(Pos::new(anchor, VPos::Center)),
                    );
                chart.draw_series([label]).map_err(|e| e.to_string())?;
            }
        }
        // zero, where bars start
        chart
            .draw_series([PathElement::new(
                vec![(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Exact(n))],
                OUTLINE,
            )])
            .map_err(|e| e.to_string())?;
        style::draw_legend(&below, &legend)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok((svg, (f.width, f.height)))
}

/// Group `i` of `n`: its segment of the axis (the first group at the top).
pub fn band(n: usize, i: usize) -> usize {
    n - 1 - i
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordusize>,
    >,
>;

/// The axes: values along x with a light major grid, the groups' names along y.
fn axes<'a, DB: DrawingBackend + 'a>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    f: &Frame,
    (lo, hi, ticks): (f64, f64, usize),
    labels: &'a [String],
    value_desc: &'a str,
) -> Result<Chart<'a, DB>, String> {
    let n = labels.len().max(1);
    // `0..n - 1` holds n segments (a range's end is a segment of its own)
    let mut chart = ChartBuilder::on(area)
        .margin_top(8)
        .margin_right(14)
        .x_label_area_size(40)
        .y_label_area_size(f.label_area)
        .build_cartesian_2d(lo..hi, (0..n - 1).into_segmented())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .x_labels(ticks)
        .x_label_formatter(&|x| number(*x))
        .y_labels(n)
        .y_label_formatter(&|y| match y {
            SegmentValue::CenterOf(j) if *j < n => {
                labels.get(n - 1 - j).cloned().unwrap_or_default()
            }
            _ => String::new(),
        })
        .x_desc(value_desc)
        .label_style(TICK_FONT)
        .axis_desc_style(AXIS_FONT)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// A bar's value: one decimal, a true minus sign.
fn number_1(x: f64) -> String {
    let s = format!("{x:.1}");
    match s.as_str() {
        "-0.0" => "0.0".into(),
        _ => s.replace('-', "\u{2212}"),
    }
}

/// A tick's number: no trailing zeros, no exponent for ordinary sizes, a true minus sign.
pub fn number(x: f64) -> String {
    let s = format!("{:.4}", x);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    match s {
        "-0" => "0".into(),
        _ => s.replace('-', "\u{2212}"),
    }
}
