//! Charts as SVG (plotters): naturalness by level, time by level, robustness per tool, RNC by
//! category and ROC curves. Plain data in, SVG text out.

use plotters::prelude::*;

use super::analysis::{Category, Report, StudyData};

#[derive(Debug, thiserror::Error)]
#[error("chart {chart}: {reason}")]
pub struct PlotError {
    pub chart: String,
    pub reason: String,
}

fn err(chart: &str) -> impl Fn(String) -> PlotError + '_ {
    move |reason| PlotError {
        chart: chart.to_owned(),
        reason,
    }
}

/// Okabe & Ito's colour-blind-safe palette: blue and sky blue for the natural side, orange and
/// vermillion for the unnatural side (told apart under every common colour-vision deficiency).
const CATEGORY_COLOURS: [RGBColor; 4] = [
    RGBColor(0, 114, 178),  // natural: blue
    RGBColor(86, 180, 233), // likely natural: sky blue
    RGBColor(230, 159, 0),  // likely unnatural: orange
    RGBColor(213, 94, 0),   // unnatural: vermillion
];
/// Text sizes readable in the page and in a paper's figure (the PNG is drawn at twice the size).
const TITLE_FONT: (&str, u32) = ("sans-serif", 22);
const LABEL_FONT: (&str, u32) = ("sans-serif", 15);
const AXIS_TITLE_FONT: (&str, u32) = ("sans-serif", 16);

/// A category as people read it ("likely natural").
fn words(c: Category) -> String {
    c.as_str().replace('_', " ")
}

/// A count axis: its top (a multiple of a round step above `max`) and how many labels, so every
/// tick is a whole number.
fn count_axis(max: f64) -> (f64, usize) {
    let want = (max * 1.05).max(1.0);
    let mut step = 1.0;
    let mut i = 0;
    while (want / step).ceil() > 10.0 {
        step *= [2.0, 2.5, 2.0][i % 3];
        i += 1;
    }
    let steps = (want / step).ceil();
    (steps * step, steps as usize + 1)
}
const SIZE: (u32, u32) = (720, 400);

/// Stacked bars: one bar per group, stacked by naturalness category (natural first).
pub fn stacked_categories(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    groups: &[(String, [f64; 4])],
) -> Result<String, PlotError> {
    let e = err(title);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let max = groups
            .iter()
            .map(|(_, v)| v.iter().sum::<f64>())
            .fold(0.0, f64::max)
            .max(1.0);
        let n = groups.len().max(1);
        // headroom above the tallest bar for the legend (upper right), so it hides no bar
        let (top, ticks) = count_axis(max * 1.45);
        // `0..n - 1` holds n segments (a range's end is a segment of its own)
        let mut chart = ChartBuilder::on(&root)
            .caption(title, TITLE_FONT)
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d((0..n - 1).into_segmented(), 0f64..top)
            .map_err(|x| e(x.to_string()))?;
        let labels: Vec<String> = groups.iter().map(|(g, _)| g.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_labels(ticks)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(LABEL_FONT)
            .axis_desc_style(AXIS_TITLE_FONT)
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(|x| e(x.to_string()))?;
        for (c, cat) in Category::ALL.iter().enumerate() {
            let colour = CATEGORY_COLOURS[c];
            let rects: Vec<Rectangle<(SegmentValue<usize>, f64)>> = groups
                .iter()
                .enumerate()
                .map(|(i, (_, v))| {
                    let base: f64 = v[..c].iter().sum();
                    let mut r = Rectangle::new(
                        [
                            (SegmentValue::Exact(i), base),
                            (SegmentValue::Exact(i + 1), base + v[c]),
                        ],
                        colour.filled(),
                    );
                    r.set_margin(0, 0, 12, 12);
                    r
                })
                .collect();
            chart
                .draw_series(rects)
                .map_err(|x| e(x.to_string()))?
                .label(words(*cat))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(LABEL_FONT)
            .draw()
            .map_err(|x| e(x.to_string()))?;
        root.present().map_err(|x| e(x.to_string()))?;
    }
    Ok(svg)
}

/// The value axis of box plots over data from `lo` to `hi` (finite): a little room on both
/// sides, never below zero when the data are not, and finite however extreme the data (the
/// room is computed in halves, so `f64::MAX` cannot overflow it).
fn value_axis(lo: f64, hi: f64) -> (f64, f64) {
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
fn display_exponent(magnitude: f64) -> i32 {
    if magnitude == 0.0 || !magnitude.is_finite() || (1e-3..=1e9).contains(&magnitude) {
        return 0;
    }
    magnitude.log10().floor() as i32
}

/// Box plots, one per group, by Tukey's rule (`stats::tukey_box`): the box from the first to
/// the third quartile with the median, whiskers at the most extreme data points within 1.5 IQR,
/// the points beyond as outliers. Non-finite values are not data and are left out.
pub fn box_plots(
    title: &str,
    y_label: &str,
    groups: &[(String, Vec<f64>)],
) -> Result<String, PlotError> {
    let e = err(title);
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
        value_axis(lo, hi)
    } else {
        (0.0, 1.0)
    };
    // the axis's arithmetic (plotters' ticks) needs comfortable magnitudes: extreme data are
    // drawn in units of a power of ten, which the axis title says
    let exponent = display_exponent(bottom.abs().max(top.abs()));
    let unit = 10f64.powi(exponent);
    let scaled = |x: f64| x / unit;
    let (bottom, top) = (scaled(bottom), scaled(top));
    let y_title = if exponent == 0 {
        y_label.to_owned()
    } else {
        format!("{y_label} (×1e{exponent})")
    };
    let boxes: Vec<(&str, crate::stats::TukeyBox)> = boxes
        .into_iter()
        .map(|(g, b)| {
            let b = crate::stats::TukeyBox {
                q1: scaled(b.q1),
                median: scaled(b.median),
                q3: scaled(b.q3),
                lower_whisker: scaled(b.lower_whisker),
                upper_whisker: scaled(b.upper_whisker),
                outliers: b.outliers.iter().map(|x| scaled(*x)).collect(),
                n: b.n,
            };
            (g, b)
        })
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let n = boxes.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, TITLE_FONT)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((0..n - 1).into_segmented(), bottom..top)
            .map_err(|x| e(x.to_string()))?;
        let labels: Vec<String> = boxes
            .iter()
            .map(|(g, b)| format!("{g} (n={})", b.n))
            .collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(y_title.as_str())
            .label_style(LABEL_FONT)
            .axis_desc_style(AXIS_TITLE_FONT)
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(|x| e(x.to_string()))?;
        let colour = CATEGORY_COLOURS[0];
        // the box is 30 px wide whatever the number of groups; caps 16 px
        let plot_width = SIZE.0.saturating_sub(64 + 20);
        let margin = (plot_width / n as u32).saturating_sub(30) / 2;
        for (i, (_, b)) in boxes.iter().enumerate() {
            let at = |y: f64| (SegmentValue::CenterOf(i), y);
            let mut body = Rectangle::new(
                [
                    (SegmentValue::Exact(i), b.q1),
                    (SegmentValue::Exact(i + 1), b.q3),
                ],
                colour.mix(0.25).filled(),
            );
            body.set_margin(0, 0, margin, margin);
            let mut edge = Rectangle::new(
                [
                    (SegmentValue::Exact(i), b.q1),
                    (SegmentValue::Exact(i + 1), b.q3),
                ],
                colour.stroke_width(1),
            );
            edge.set_margin(0, 0, margin, margin);
            chart
                .draw_series([body, edge])
                .map_err(|x| e(x.to_string()))?;
            let line = |from: f64, to: f64| PathElement::new(vec![at(from), at(to)], colour);
            let tick = |y: f64, half: i32, width: u32| {
                EmptyElement::at(at(y))
                    + PathElement::new(vec![(-half, 0), (half, 0)], colour.stroke_width(width))
            };
            chart
                .draw_series([line(b.q3, b.upper_whisker), line(b.lower_whisker, b.q1)])
                .map_err(|x| e(x.to_string()))?;
            chart
                .draw_series([
                    tick(b.upper_whisker, 8, 1),
                    tick(b.lower_whisker, 8, 1),
                    tick(b.median, 15, 2),
                ])
                .map_err(|x| e(x.to_string()))?;
            chart
                .draw_series(
                    b.outliers
                        .iter()
                        .map(|y| Circle::new(at(*y), 3, colour.stroke_width(1))),
                )
                .map_err(|x| e(x.to_string()))?;
        }
        root.present().map_err(|x| e(x.to_string()))?;
    }
    Ok(svg)
}

/// Series colours: Okabe–Ito, without black (the diagonal's) and without yellow (too light on
/// white) — no red/green pair, safe for the colour-blind.
const SERIES_COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
];

/// Series `i`'s marker at `at` (pixels from its anchor): circle, triangle, cross, square, in turn.
fn marker<DB: DrawingBackend>(
    i: usize,
    at: (i32, i32),
    colour: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new(at, 4, colour.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, colour.filled()).into_dyn(),
        2 => Cross::new(at, 4, colour.stroke_width(2)).into_dyn(),
        _ => Rectangle::new(
            [(at.0 - 3, at.1 - 3), (at.0 + 3, at.1 + 3)],
            colour.filled(),
        )
        .into_dyn(),
    }
}

/// ROC curves (false-positive rate, true-positive rate), one per series, with the diagonal.
pub fn roc_curves(title: &str, curves: &[(String, Vec<(f64, f64)>)]) -> Result<String, PlotError> {
    let e = err(title);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (480, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..1f64, 0f64..1f64)
            .map_err(|x| e(x.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("false-positive rate")
            .y_desc("true-positive rate")
            .label_style(LABEL_FONT)
            .axis_desc_style(AXIS_TITLE_FONT)
            .draw()
            .map_err(|x| e(x.to_string()))?;
        chart
            .draw_series(LineSeries::new(
                vec![(0.0, 0.0), (1.0, 1.0)],
                BLACK.mix(0.3),
            ))
            .map_err(|x| e(x.to_string()))?;
        for (i, (name, pts)) in curves.iter().enumerate() {
            let colour = SERIES_COLOURS[i % SERIES_COLOURS.len()];
            chart
                .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                .map_err(|x| e(x.to_string()))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (15, 0)], colour.stroke_width(2))
                        + marker(i, (8, 0), colour)
                });
            // markers along the curve (a dozen at most): series apart in grey-scale print too
            let step = (pts.len() / 12).max(1);
            chart
                .draw_series(
                    pts.iter()
                        .step_by(step)
                        .map(|p| EmptyElement::at(*p) + marker(i, (0, 0), colour)),
                )
                .map_err(|x| e(x.to_string()))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|x| e(x.to_string()))?;
        root.present().map_err(|x| e(x.to_string()))?;
    }
    Ok(svg)
}

/// Every chart of a report: (file name, SVG).
pub fn report_charts(
    report: &Report,
    data: &StudyData,
) -> Result<Vec<(String, String)>, PlotError> {
    let mut out = Vec::new();
    let counts = |c: &super::analysis::CategoryCounts| {
        [
            c.natural as f64,
            c.likely_natural as f64,
            c.likely_unnatural as f64,
            c.unnatural as f64,
        ]
    };
    let levels: Vec<(String, [f64; 4])> = report
        .counts_by_level
        .iter()
        .map(|(l, c)| (l.clone(), counts(c)))
        .collect();
    if !levels.is_empty() {
        out.push((
            "naturalness_by_level.svg".to_owned(),
            stacked_categories("Naturalness by level", "level", "items", &levels)?,
        ));
    }
    if let Some(t) = &report.time {
        let groups: Vec<(String, Vec<f64>)> = crate::formats::Level::ALL
            .iter()
            .map(|l| {
                let v = data
                    .votes
                    .iter()
                    .filter(|v| data.items[v.item].level == *l)
                    .filter_map(|v| v.time_secs)
                    .filter(|x| *x < t.p99_cutoff)
                    .collect();
                (l.as_str().to_owned(), v)
            })
            .collect();
        out.push((
            "time_by_level.svg".to_owned(),
            box_plots("Time on item by level", "time on item (seconds)", &groups)?,
        ));
    }
    if !report.robustness.is_empty() {
        let tools: Vec<(String, [f64; 4])> = report
            .robustness
            .iter()
            .map(|(tool, r)| {
                let share = |c: Category| {
                    r.change_share_by_category
                        .get(c.as_str())
                        .copied()
                        .unwrap_or(0.0)
                        * r.changes_all as f64
                };
                (
                    tool.clone(),
                    [
                        share(Category::Natural),
                        share(Category::LikelyNatural),
                        share(Category::LikelyUnnatural),
                        share(Category::Unnatural),
                    ],
                )
            })
            .collect();
        out.push((
            "robustness.svg".to_owned(),
            stacked_categories(
                "Prediction changes by naturalness",
                "repair tool",
                "prediction changes (transformations)",
                &tools,
            )?,
        ));
    }
    let mut rocs = Vec::new();
    for (model, m) in &report.rnc {
        let groups: Vec<(String, Vec<f64>)> = Category::ALL
            .iter()
            .map(|c| {
                (
                    words(*c),
                    m.ranking
                        .iter()
                        .filter(|r| r.category == Some(*c))
                        .map(|r| r.rnc)
                        .collect(),
                )
            })
            .collect();
        out.push((
            format!("rnc_by_category_{model}.svg"),
            box_plots(
                &format!("RNC by category ({model})"),
                "relative naturalness change, RNC (%)",
                &groups,
            )?,
        ));
        if let Some(roc) = &m.roc_rnc {
            rocs.push((
                format!("{model} (AUC {:.3})", m.auc_rnc.unwrap_or(f64::NAN)),
                roc.fpr
                    .iter()
                    .copied()
                    .zip(roc.tpr.iter().copied())
                    .collect(),
            ));
        }
    }
    if !rocs.is_empty() {
        out.push((
            "roc_rnc.svg".to_owned(),
            roc_curves("ROC of RNC: natural vs unnatural", &rocs)?,
        ));
    }
    Ok(out)
}

/// The font charts are drawn with when rasterised (DejaVu Sans, shipped with natstudy so PNGs
/// look the same on every machine; see `assets/fonts/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static DB: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> =
        std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        db.set_serif_family("DejaVu Sans");
        db.set_monospace_family("DejaVu Sans");
        std::sync::Arc::new(db)
    })
    .clone()
}

/// A chart's SVG as a PNG at `scale` × its size (2 for sharp text on high-density screens).
pub fn svg_to_png(name: &str, svg: &str, scale: f32) -> Result<Vec<u8>, PlotError> {
    let fail = err(name);
    let options = resvg::usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = resvg::usvg::Tree::from_str(svg, &options).map_err(|e| fail(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| fail("empty chart".into()))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| fail("empty chart".into()))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).expect("well-formed SVG")
    }

    #[test]
    fn stacked_bars_have_one_rect_per_group_and_category_and_a_legend() {
        let svg = stacked_categories(
            "T",
            "level",
            "items",
            &[
                ("naming".into(), [3.0, 1.0, 1.0, 2.0]),
                ("statement".into(), [1.0, 0.0, 2.0, 5.0]),
            ],
        )
        .expect("svg");
        let doc = parse(&svg);
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_owned()))
            .collect();
        for label in [
            "natural",
            "likely natural",
            "likely unnatural",
            "unnatural",
            "naming",
            "statement",
            "level",
            "items",
        ] {
            assert!(
                texts.iter().any(|t| t == label),
                "missing {label} in {texts:?}"
            );
        }
        let unnatural: Vec<roxmltree::Node<'_, '_>> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#D55E00"))
            .collect();
        assert_eq!(
            unnatural.len(),
            2 + 1,
            "two unnatural bars and a legend swatch"
        );
        // counts are whole numbers on the axis (the tallest bar is 8)
        assert!(texts.iter().any(|t| t == "8") || texts.iter().any(|t| t == "9"));
        assert!(!texts.iter().any(|t| t.contains('.')), "{texts:?}");
        // no empty slot after the last group: its bar ends near the right edge
        let right = |n: &roxmltree::Node<'_, '_>| {
            let x: f64 = n.attribute("x").and_then(|v| v.parse().ok()).unwrap_or(0.0);
            let w: f64 = n
                .attribute("width")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            x + w
        };
        let bars = unnatural.iter().filter(|n| {
            n.attribute("height")
                .and_then(|h| h.parse::<f64>().ok())
                .is_some_and(|h| h > 12.0)
        });
        let last = bars.map(right).fold(0.0, f64::max);
        assert!(
            last > 0.85 * f64::from(SIZE.0),
            "the last bar ends at {last}"
        );
    }

    /// The numbers on a chart's axes.
    fn tick_values(svg: &str) -> Vec<f64> {
        parse(svg)
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().and_then(|t| t.trim().parse::<f64>().ok()))
            .collect()
    }

    #[test]
    fn the_time_axis_never_goes_below_zero_on_non_negative_data() {
        // the shortest times are near zero and the spread is wide: 1.5 IQR fences reach far
        // below zero, the whiskers (at data) and the axis do not
        let svg = box_plots(
            "Time on item by level",
            "time on item (seconds)",
            &[
                (
                    "naming".into(),
                    vec![0.83, 2.0, 30.0, 31.0, 32.0, 60.0, 90.0],
                ),
                ("expression".into(), vec![1.51, 40.0, 41.0, 42.0, 200.0]),
                ("statement".into(), vec![1.2, 1.3, 70.0, 71.0]),
            ],
        )
        .expect("svg");
        let ticks = tick_values(&svg);
        assert!(ticks.len() >= 3, "{ticks:?}");
        assert!(ticks.iter().all(|t| *t >= 0.0), "{ticks:?}");
        // and one outlier point for 200 (the expression group's)
        let circles = parse(&svg)
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count();
        assert_eq!(
            circles, 2,
            "the expression group's 1.51 and 200 are outliers"
        );
    }

    #[test]
    fn extreme_values_draw_a_chart_and_finish() {
        // times of 1e308, f64::MAX and 9e307 once spun the report for minutes
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = box_plots(
                "T",
                "s",
                &[
                    ("a".into(), vec![1e308, f64::MAX, 9e307]),
                    ("b".into(), vec![-f64::MAX, 0.0, f64::NAN, f64::INFINITY]),
                ],
            );
            let _ = tx.send(r.map(|svg| svg.len()));
        });
        let drawn = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the chart finishes");
        assert!(drawn.expect("svg") > 0);
        // drawn in units of a power of ten, which the axis says
        let svg = box_plots("T", "s", &[("a".into(), vec![1e308, f64::MAX, 9e307])]).expect("svg");
        assert!(svg.contains("×1e308"), "the unit is on the axis");
        let tiny = box_plots("T", "s", &[("a".into(), vec![5e-324, 1e-300, 2e-300])]).expect("svg");
        assert!(tiny.contains("×1e-300"), "the unit is on the axis");
        assert_eq!(display_exponent(86_400.0), 0);
        assert_eq!(display_exponent(0.0), 0);
    }

    #[test]
    fn box_plots_and_roc_render() {
        let svg = box_plots(
            "B",
            "s",
            &[
                ("a".into(), vec![1.0, 2.0, 3.0, 10.0]),
                ("b".into(), vec![2.0, 2.5]),
            ],
        )
        .expect("svg");
        let texts: Vec<String> = parse(&svg)
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_owned()))
            .collect();
        assert!(
            texts.iter().any(|t| t == "a (n=4)") && texts.iter().any(|t| t == "b (n=2)"),
            "{texts:?}"
        );
        let roc = roc_curves(
            "R",
            &[("m".into(), vec![(0.0, 0.0), (0.2, 0.7), (1.0, 1.0)])],
        )
        .expect("svg");
        let doc = parse(&roc);
        assert!(
            doc.descendants()
                .filter(|n| n.has_tag_name("polyline"))
                .count()
                >= 2,
            "diagonal and curve"
        );
        // several series: Okabe–Ito colours (no red/green pair), each with its own markers
        let curve = |k: f64| vec![(0.0, 0.0), (0.2, k), (0.5, 0.8), (1.0, 1.0)];
        let roc = roc_curves(
            "R",
            &[
                ("a".into(), curve(0.5)),
                ("b".into(), curve(0.6)),
                ("c".into(), curve(0.7)),
            ],
        )
        .expect("svg");
        let strokes: std::collections::BTreeSet<String> = parse(&roc)
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .filter_map(|n| n.attribute("stroke").map(str::to_owned))
            .collect();
        for bad in ["#E6194B", "#3CB44B", "#FF0000", "#00FF00"] {
            assert!(
                !strokes.iter().any(|s| s.eq_ignore_ascii_case(bad)),
                "{strokes:?}"
            );
        }
        for c in &SERIES_COLOURS[..3] {
            let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            assert!(
                strokes.iter().any(|s| s.eq_ignore_ascii_case(&hex)),
                "{hex} in {strokes:?}"
            );
        }
        let doc = parse(&roc);
        let circles = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count();
        let polygons = doc
            .descendants()
            .filter(|n| n.has_tag_name("polygon"))
            .count();
        assert!(
            circles >= 4 && polygons >= 4,
            "markers: {circles} circles, {polygons} triangles"
        );
    }

    #[test]
    fn charts_rasterise_to_png_with_text() {
        let svg = stacked_categories(
            "Naturalness by level",
            "level",
            "items",
            &[
                ("naming".into(), [3.0, 1.0, 1.0, 0.0]),
                ("statement".into(), [1.0, 0.0, 2.0, 2.0]),
            ],
        )
        .expect("svg");
        let png = svg_to_png("naturalness_by_level", &svg, 2.0).expect("png");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let img = resvg::tiny_skia::Pixmap::decode_png(&png).expect("decodes");
        assert_eq!((img.width(), img.height()), (SIZE.0 * 2, SIZE.1 * 2));
        // the title's glyphs are drawn: dark pixels in the top band, where no bar reaches
        let top = (img.width() * 60) as usize;
        let dark = img.pixels()[..top]
            .iter()
            .filter(|p| u32::from(p.red()) + u32::from(p.green()) + u32::from(p.blue()) < 200)
            .count();
        assert!(dark > 200, "title text rendered ({dark} dark pixels)");
    }
}
