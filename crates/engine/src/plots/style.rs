//! One style for every figure, sized for a paper: a figure is drawn at 100 units to the inch
//! and its SVG declares its print size (one column: 3.5 in; two columns: 7.16 in), so that its
//! smallest text — tick labels of 12 units — prints at 8.6 pt. No minor grid, a light major
//! grid, legends outside the data, colours that stay apart for colour-blind readers and in grey.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Drawing units to the inch.
pub const PER_INCH: f64 = 100.0;
/// One column of a two-column journal page, and both columns.
pub const ONE_COLUMN: u32 = 350;
pub const TWO_COLUMNS: u32 = 716;

/// Font sizes as plotters takes them: its SVG writes 1/1.24 of the size asked, so 15 draws
/// text of 12.1 units (8.7 pt in print) and 16 of 12.9 (9.3 pt).
pub const TICK_FONT: (&str, u32) = ("sans-serif", 15);
pub const AXIS_FONT: (&str, u32) = ("sans-serif", 16);
pub const LEGEND_FONT: (&str, u32) = ("sans-serif", 15);
/// What plotters' SVG backend divides a font size by.
const SVG_FONT_RATIO: f64 = 1.24;

/// The naturalness categories, natural → unnatural: four steps of viridis, dark to light (an
/// ordered scale that grey-scale print keeps in order; no red/green pair).
pub const CATEGORY_COLOURS: [RGBColor; 4] = [
    RGBColor(0x44, 0x01, 0x54), // natural: dark purple
    RGBColor(0x31, 0x68, 0x8e), // likely natural: blue
    RGBColor(0x35, 0xb7, 0x79), // likely unnatural: green
    RGBColor(0xfd, 0xe7, 0x25), // unnatural: yellow
];

/// Series (models, tools' measures): Okabe–Ito without black and yellow, in an order whose
/// neighbours differ in lightness (grey L* 46, 71, 58, 70, 54, 61); lines also carry markers.
pub const SERIES_COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
];

/// The light major grid and the axes.
pub const GRID: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
/// Outlines that keep light fills visible on white.
pub const OUTLINE: RGBColor = RGBColor(0x33, 0x33, 0x33);

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub enum Swatch {
    /// A filled square (bars).
    Fill(RGBColor),
    /// A line with series `i`'s marker on it.
    Line(RGBColor, usize),
}

/// Rough width of text drawn at font size `size` (as plotters takes it): what legends and label
/// areas are laid out with (DejaVu Sans averages about 0.55 em).
pub fn text_width(text: &str, size: u32) -> i32 {
    (text.chars().count() as f64 * f64::from(size) / SVG_FONT_RATIO * 0.56).ceil() as i32
}

/// The width of an axis's area for category labels: the longest label (a tenth wider than the
/// average glyph: names like `DividingComposedIf` are mostly capitals), within half the figure,
/// and a gap before the ticks.
pub fn label_area(labels: &[String], width: u32) -> u32 {
    labels
        .iter()
        .map(|l| text_width(l, TICK_FONT.1) * 11 / 10)
        .max()
        .unwrap_or(0)
        .clamp(20, width as i32 / 2) as u32
        + 16
}

/// A legend of filled swatches: one per (name, colour).
pub fn fill_legend(series: &[(String, RGBColor)]) -> Vec<(String, Swatch)> {
    series
        .iter()
        .map(|(n, c)| (n.clone(), Swatch::Fill(*c)))
        .collect()
}

const SWATCH: i32 = 12;
const GAP: i32 = 14;
const ROW: i32 = 18;

/// The rows a legend takes at `width`.
fn legend_rows(items: &[(String, Swatch)], width: i32) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
    let mut x = 0;
    for (i, (label, _)) in items.iter().enumerate() {
        let w = SWATCH + 4 + text_width(label, LEGEND_FONT.1);
        if x > 0 && x + w > width {
            rows.push(Vec::new());
            x = 0;
        }
        if let Some(r) = rows.last_mut() {
            r.push(i);
        }
        x += w + GAP;
    }
    rows
}

/// The height a legend below a figure of `width` needs.
pub fn legend_height(items: &[(String, Swatch)], width: u32) -> u32 {
    if items.is_empty() {
        return 0;
    }
    (legend_rows(items, width as i32 - 20).len() as i32 * ROW + 8) as u32
}

/// Draws a legend in its own strip (below the data, never over it), rows centred.
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[(String, Swatch)],
) -> Result<(), String> {
    let (w, _) = area.dim_in_pixel();
    let font = TextStyle::from(LEGEND_FONT.into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in legend_rows(items, w as i32 - 20).iter().enumerate() {
        let total: i32 = row
            .iter()
            .map(|&i| SWATCH + 4 + text_width(&items[i].0, LEGEND_FONT.1))
            .sum::<i32>()
            + GAP * (row.len() as i32 - 1);
        let mut x = (w as i32 - total) / 2;
        let y = 4 + r as i32 * ROW + ROW / 2;
        for &i in row {
            let (label, swatch) = &items[i];
            match *swatch {
                Swatch::Fill(c) => {
                    area.draw(&Rectangle::new(
                        [(x, y - SWATCH / 2), (x + SWATCH, y + SWATCH / 2)],
                        c.filled(),
                    ))
                    .map_err(|e| e.to_string())?;
                    area.draw(&Rectangle::new(
                        [(x, y - SWATCH / 2), (x + SWATCH, y + SWATCH / 2)],
                        OUTLINE.stroke_width(1),
                    ))
                    .map_err(|e| e.to_string())?;
                }
                Swatch::Line(c, k) => {
                    area.draw(&PathElement::new(
                        vec![(x - 2, y), (x + SWATCH + 2, y)],
                        c.stroke_width(2),
                    ))
                    .map_err(|e| e.to_string())?;
                    area.draw(&(EmptyElement::at((x + SWATCH / 2, y)) + marker(k, (0, 0), c)))
                        .map_err(|e| e.to_string())?;
                }
            }
            area.draw(&Text::new(
                label.as_str(),
                (x + SWATCH + 4, y),
                font.clone(),
            ))
            .map_err(|e| e.to_string())?;
            x += SWATCH + 4 + text_width(label, LEGEND_FONT.1) + GAP;
        }
    }
    Ok(())
}

/// Series `i`'s marker at `at` (pixels from its anchor): circle, triangle, cross, square, in turn.
pub fn marker<DB: DrawingBackend>(
    i: usize,
    at: (i32, i32),
    colour: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new(at, 3, colour.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 4, colour.filled()).into_dyn(),
        2 => Cross::new(at, 3, colour.stroke_width(2)).into_dyn(),
        _ => Rectangle::new(
            [(at.0 - 3, at.1 - 3), (at.0 + 3, at.1 + 3)],
            colour.filled(),
        )
        .into_dyn(),
    }
}

/// The SVG declaring its print size: `width`/`height` in inches, drawn in `viewBox` units.
pub fn print_size(svg: String, (w, h): (u32, u32)) -> String {
    let drawn = format!("width=\"{w}\" height=\"{h}\"");
    let print = format!(
        "width=\"{:.2}in\" height=\"{:.2}in\"",
        f64::from(w) / PER_INCH,
        f64::from(h) / PER_INCH
    );
    svg.replacen(&drawn, &print, 1)
}
