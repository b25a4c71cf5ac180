use super::*;
use crate::analysis::{report_with, synthetic, Options};

fn parse(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).expect("well-formed SVG")
}

fn texts(svg: &str) -> Vec<String> {
    parse(svg)
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_owned()))
        .collect()
}

/// The figures of a synthetic study with every kind of data (votes, times, repair results,
/// two language models).
fn figures() -> Vec<Figure> {
    let data = synthetic::study(200, 7);
    let report = report_with(
        &data,
        &Options {
            bootstrap: 0,
            ..Options::default()
        },
    );
    report_figures(&report).expect("figures")
}

#[test]
fn a_study_has_the_papers_figures() {
    let ids: Vec<String> = figures().into_iter().map(|f| f.id).collect();
    for want in [
        "naturalness_by_level",
        "naturalness_by_operator",
        "time_by_level",
        "robustness",
        "rate_drop",
        "roc_rnc",
    ] {
        assert!(ids.iter().any(|i| i == want), "{want} in {ids:?}");
    }
    assert!(
        ids.iter().any(|i| i.starts_with("rnc_by_category_")),
        "{ids:?}"
    );
}

/// The print size the SVG declares (inches) and its drawing's size (viewBox units).
fn declared(svg: &str) -> ((f64, f64), (f64, f64)) {
    let doc = parse(svg);
    let root = doc.root_element();
    let inches = |a: &str| -> f64 {
        root.attribute(a)
            .and_then(|v| v.strip_suffix("in"))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{a} in inches: {:?}", root.attribute(a)))
    };
    let vb: Vec<f64> = root
        .attribute("viewBox")
        .expect("viewBox")
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    ((inches("width"), inches("height")), (vb[2], vb[3]))
}

/// At the size a figure declares (one column: 3.5 in; two: 7.16 in), no text is smaller than
/// 8 pt.
#[test]
fn no_text_is_smaller_than_8_pt_in_print() {
    for f in figures() {
        let ((w_in, _), (w_units, _)) = declared(&f.svg);
        assert!(
            (w_in - 3.5).abs() < 1e-9 || (w_in - 7.16).abs() < 1e-9,
            "{}: {w_in} in wide",
            f.id
        );
        let pt_per_unit = w_in * 72.0 / w_units;
        let doc = parse(&f.svg);
        let sizes: Vec<f64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.attribute("font-size").and_then(|s| s.parse().ok()))
            .collect();
        assert!(!sizes.is_empty(), "{}", f.id);
        let smallest = sizes.iter().copied().fold(f64::INFINITY, f64::min) * pt_per_unit;
        assert!(smallest >= 8.0, "{}: text of {smallest:.2} pt", f.id);
    }
}

/// sRGB (0..255) to linear light.
fn linear(c: u8) -> f64 {
    let c = f64::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn gamma(c: f64) -> f64 {
    let c = c.clamp(0.0, 1.0);
    if c <= 0.0031308 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

/// CIE L*a*b* of a linear RGB colour.
fn lab(rgb: [f64; 3]) -> [f64; 3] {
    let [r, g, b] = rgb.map(|c| linear((gamma(c) * 255.0).round() as u8));
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 216.0 / 24389.0 {
            t.cbrt()
        } else {
            (24389.0 / 27.0 * t + 16.0) / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// How a colour looks: as it is, to a protanope and a deuteranope (Machado et al. 2009,
/// severity 1), and in grey (its luminance alone).
fn seen(c: RGBColor) -> [[f64; 3]; 4] {
    let v = [linear(c.0), linear(c.1), linear(c.2)];
    let m = |k: [[f64; 3]; 3]| -> [f64; 3] {
        [0, 1, 2].map(|i| k[i][0] * v[0] + k[i][1] * v[1] + k[i][2] * v[2])
    };
    let protan = m([
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ]);
    let deutan = m([
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ]);
    let y = 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
    [lab(v), lab(protan), lab(deutan), lab([y, y, y])]
}

fn delta_e(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Colours that appear together stay apart for protanopes, deuteranopes and in grey-scale
/// print: the four categories (ordered dark to light), and each pair of series colours in
/// the order charts take them. No red against green.
#[test]
fn the_palettes_stay_apart_for_colour_blind_readers_and_in_grey() {
    let check = |colours: &[RGBColor], min: f64, what: &str| {
        for (i, a) in colours.iter().enumerate() {
            for b in &colours[i + 1..] {
                for (view, name) in ["as is", "protanopia", "deuteranopia", "grey"]
                    .iter()
                    .enumerate()
                {
                    let d = delta_e(seen(*a)[view], seen(*b)[view]);
                    assert!(d >= min, "{what}: {a:?} and {b:?} {d:.1} apart in {name}");
                }
            }
        }
    };
    check(&style::CATEGORY_COLOURS, 15.0, "categories");
    // the categories keep their order in grey: natural darkest
    let lightness: Vec<f64> = style::CATEGORY_COLOURS
        .iter()
        .map(|c| seen(*c)[3][0])
        .collect();
    assert!(lightness.windows(2).all(|w| w[0] < w[1]), "{lightness:?}");
    // the two series of the rate figure, and the first two of any line chart
    check(&style::SERIES_COLOURS[..2], 10.0, "series");
    // neighbours in the series order differ in grey
    for w in style::SERIES_COLOURS.windows(2) {
        let d = delta_e(seen(w[0])[3], seen(w[1])[3]);
        assert!(d >= 5.0, "series {:?} and {:?}: {d:.1} in grey", w[0], w[1]);
    }
    // no pure or near-pure red with green anywhere
    let all: Vec<RGBColor> = style::CATEGORY_COLOURS
        .iter()
        .chain(&style::SERIES_COLOURS)
        .copied()
        .collect();
    let red = |c: &RGBColor| c.0 > 180 && c.1 < 80 && c.2 < 80;
    let green = |c: &RGBColor| c.1 > 150 && c.0 < 100 && c.2 < 100;
    assert!(!(all.iter().any(red) && all.iter().any(green)), "{all:?}");
}

#[test]
fn stacked_bars_draw_every_segment_and_a_legend_below() {
    let series = category_series();
    let (svg, size) = bars::stacked(
        &[
            ("naming".into(), vec![3.0, 1.0, 1.0, 2.0]),
            ("statement".into(), vec![1.0, 0.0, 2.0, 5.0]),
        ],
        &series,
        "items",
        style::ONE_COLUMN,
    )
    .expect("svg");
    let t = texts(&svg);
    for label in [
        "natural",
        "likely natural",
        "likely unnatural",
        "unnatural",
        "naming",
        "statement",
        "items",
    ] {
        assert!(t.iter().any(|x| x == label), "missing {label} in {t:?}");
    }
    let doc = parse(&svg);
    let yellow = |n: &roxmltree::Node<'_, '_>| {
        n.has_tag_name("rect")
            && n.attribute("fill")
                .is_some_and(|f| f.eq_ignore_ascii_case("#FDE725"))
    };
    let unnatural: Vec<roxmltree::Node<'_, '_>> = doc.descendants().filter(yellow).collect();
    assert_eq!(
        unnatural.len(),
        2 + 1,
        "two unnatural segments and a legend swatch"
    );
    // the legend lies below every bar: its swatch is the lowest yellow rectangle
    let y = |n: &roxmltree::Node<'_, '_>| -> f64 {
        n.attribute("y").and_then(|v| v.parse().ok()).unwrap_or(0.0)
    };
    let legend = unnatural.iter().map(y).fold(f64::MIN, f64::max);
    let bars_bottom = unnatural
        .iter()
        .filter(|n| y(n) < legend)
        .map(|n| {
            y(n) + n
                .attribute("height")
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        })
        .fold(0.0, f64::max);
    assert!(
        legend > bars_bottom,
        "legend at {legend}, bars down to {bars_bottom}"
    );
    assert!(legend < f64::from(size.1));
    // the first group at the top
    let naming_label = doc
        .descendants()
        .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some("naming"))
        .expect("label");
    let statement_label = doc
        .descendants()
        .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some("statement"))
        .expect("label");
    assert!(y(&naming_label) < y(&statement_label));
}

/// The numbers on a chart's value axis.
fn tick_values(svg: &str) -> Vec<f64> {
    texts(svg)
        .iter()
        .filter_map(|t| t.replace('\u{2212}', "-").parse::<f64>().ok())
        .collect()
}

#[test]
fn the_time_axis_never_goes_below_zero_on_non_negative_data() {
    // the shortest times are near zero and the spread is wide: 1.5 IQR fences reach far below
    // zero, the whiskers (at data) and the axis do not
    let (svg, _) = boxes::box_plots(
        &[
            (
                "naming".into(),
                vec![0.83, 2.0, 30.0, 31.0, 32.0, 60.0, 90.0],
            ),
            ("expression".into(), vec![1.51, 40.0, 41.0, 42.0, 200.0]),
            ("statement".into(), vec![1.2, 1.3, 70.0, 71.0]),
        ],
        "time on item (s)",
        style::ONE_COLUMN,
    )
    .expect("svg");
    let ticks = tick_values(&svg);
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(ticks.iter().all(|t| *t >= 0.0), "{ticks:?}");
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
        let r = boxes::box_plots(
            &[
                ("a".into(), vec![1e308, f64::MAX, 9e307]),
                ("b".into(), vec![-f64::MAX, 0.0, f64::NAN, f64::INFINITY]),
            ],
            "s",
            style::ONE_COLUMN,
        );
        let _ = tx.send(r.map(|(svg, _)| svg.len()));
    });
    let drawn = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the chart finishes");
    assert!(drawn.expect("svg") > 0);
    let (svg, _) =
        boxes::box_plots(&[("a".into(), vec![1e308, f64::MAX, 9e307])], "s", 350).expect("svg");
    assert!(svg.contains("×1e308"), "the unit is on the axis");
    let (tiny, _) =
        boxes::box_plots(&[("a".into(), vec![5e-324, 1e-300, 2e-300])], "s", 350).expect("svg");
    assert!(tiny.contains("×1e-300"), "the unit is on the axis");
    assert_eq!(display_exponent(86_400.0), 0);
    assert_eq!(display_exponent(0.0), 0);
}

#[test]
fn roc_curves_carry_colours_markers_and_the_legend() {
    let curve = |k: f64| vec![(0.0, 0.0), (0.2, k), (0.5, 0.8), (1.0, 1.0)];
    let (roc, _) = roc::roc_curves(
        &[
            ("a (AUC 0.600)".into(), curve(0.5)),
            ("b (AUC 0.700)".into(), curve(0.6)),
            ("c (AUC 0.800)".into(), curve(0.7)),
        ],
        style::ONE_COLUMN,
    )
    .expect("svg");
    let doc = parse(&roc);
    let strokes: std::collections::BTreeSet<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter_map(|n| n.attribute("stroke").map(str::to_owned))
        .collect();
    for c in &style::SERIES_COLOURS[..3] {
        let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        assert!(
            strokes.iter().any(|s| s.eq_ignore_ascii_case(&hex)),
            "{hex} in {strokes:?}"
        );
    }
    let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
    assert!(count("circle") >= 4 && count("polygon") >= 4, "markers");
    let t = texts(&roc);
    assert!(t.iter().any(|x| x == "b (AUC 0.700)"), "{t:?}");
}

/// Every figure as a one-page PDF of its print size, its font embedded, and as a PNG of 300
/// dots per inch of it, well under 200 KB.
#[test]
fn figures_export_to_pdf_and_png_for_print() {
    for f in figures() {
        let ((w_in, h_in), _) = declared(&f.svg);
        let pdf = svg_to_pdf(&f.id, &f.svg).expect("pdf");
        let doc = lopdf::Document::load_mem(&pdf).expect("the PDF parses");
        let pages = doc.get_pages();
        assert_eq!(pages.len(), 1, "{}", f.id);
        let page = doc
            .get_object(*pages.values().next().expect("page"))
            .and_then(|o| o.as_dict().cloned())
            .expect("page dict");
        let media: Vec<f64> = page
            .get(b"MediaBox")
            .and_then(|m| m.as_array().cloned())
            .expect("MediaBox")
            .iter()
            .filter_map(|v| {
                v.as_float()
                    .ok()
                    .map(f64::from)
                    .or_else(|| v.as_i64().ok().map(|i| i as f64))
            })
            .collect();
        assert!((media[2] - w_in * 72.0).abs() < 0.5, "{}: {media:?}", f.id);
        assert!((media[3] - h_in * 72.0).abs() < 0.5, "{}: {media:?}", f.id);
        let embedded = doc.objects.values().any(|o| {
            o.as_dict().is_ok_and(|d| {
                d.get(b"Type").ok().and_then(|t| t.as_name().ok())
                    == Some(b"FontDescriptor".as_slice())
                    && (d.has(b"FontFile2") || d.has(b"FontFile3") || d.has(b"FontFile"))
            })
        });
        assert!(embedded, "{}: its font embedded", f.id);
        let png = svg_to_png(&f.id, &f.svg, 300.0).expect("png");
        let img = resvg::tiny_skia::Pixmap::decode_png(&png).expect("decodes");
        assert_eq!(img.width(), (w_in * 300.0).round() as u32, "{}", f.id);
        assert!(png.len() < 200_000, "{}: {} bytes", f.id, png.len());
    }
}

/// A zero in grouped bars (a rate that did not drop) has its value written and no bar: an
/// empty rectangle is invalid SVG, which the PNG and PDF renderers warn about and skip.
#[test]
fn a_zero_in_grouped_bars_is_a_number_not_an_empty_rectangle() {
    let series = vec![
        ("plausible rate".to_owned(), style::SERIES_COLOURS[0]),
        ("correct rate".to_owned(), style::SERIES_COLOURS[1]),
    ];
    let groups = vec![
        ("a, all".to_owned(), vec![Some(0.0), Some(7.5)]),
        ("a, natural".to_owned(), vec![Some(0.0), Some(0.0)]),
    ];
    let (svg, _) = bars::grouped(&groups, &series, "drop (%)", 500).expect("chart");
    let doc = parse(&svg);
    let widths: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| n.attribute("width")?.parse().ok())
        .collect();
    assert!(widths.iter().all(|&w| w > 0.0), "{widths:?}");
    let zeros = texts(&svg).iter().filter(|t| *t == "0.0").count();
    assert_eq!(zeros, 3, "{:?}", texts(&svg));
}

/// Runs `draw` on a thread of its own and says whether it ended within `secs`.
fn ends_within<T: Send + 'static>(secs: u64, draw: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(draw());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .expect("the chart is drawn in bounded time")
}

/// Five participants voting 0, 1e-320 and 12.5 once spun the results page: the box plot's
/// axis over [0, 1e-320] had its unit rounded to zero and plotters' ticks never ended.
#[test]
fn subnormal_and_equal_values_draw_a_chart_and_finish() {
    for values in [
        vec![0.0, 1e-320],
        vec![1e-320],
        vec![5e-324, 1e-323],
        vec![0.0, 0.0, 0.0],
        vec![12.5; 5],
        vec![1e9, 1e9 + 1e-6],
        vec![86_400.0, f64::from_bits(86_400f64.to_bits() + 1)],
        vec![-1e-320, 1e-320],
        vec![f64::MIN_POSITIVE, f64::MIN_POSITIVE * 2.0],
    ] {
        let groups = vec![("naming".to_owned(), values.clone())];
        let svg = ends_within(20, move || {
            boxes::box_plots(&groups, "time on item (s)", style::ONE_COLUMN)
        });
        let (svg, _) = svg.unwrap_or_else(|e| panic!("{values:?}: {e}"));
        assert!(svg.contains("<svg"), "{values:?}");
    }
}

/// A million values draw as one box in bounded time.
#[test]
fn a_million_values_draw_a_box() {
    let values: Vec<f64> = (0..1_000_000).map(|i| f64::from(i % 977) * 0.25).collect();
    let (svg, _) = ends_within(60, move || {
        boxes::box_plots(&[("all".to_owned(), values)], "s", style::ONE_COLUMN)
    })
    .expect("svg");
    assert!(svg.contains("<svg"));
}

mod bounded {
    use super::*;
    use proptest::prelude::*;

    /// Numbers from every corner of `f64`: extremes, subnormals, zero, signs, ordinary sizes,
    /// and values one ulp apart.
    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1e-320),
            Just(5e-324),
            Just(f64::MIN_POSITIVE),
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(1e308),
            Just(f64::NAN),
            Just(f64::INFINITY),
            (0.0..1e5f64),
            (-1e3..1e3f64),
            any::<f64>(),
            (1u64..1000).prop_map(|n| f64::from_bits(1_000_000_000f64.to_bits() + n)),
        ]
    }

    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(48),
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Every figure kind (box plots, stacked bars, grouped bars, ROC curves) ends on any
        /// data: a single value, all values equal, values a denormal apart, extremes.
        #[test]
        fn every_figure_kind_draws_in_bounded_time(
            a in proptest::collection::vec(number(), 0..12),
            b in proptest::collection::vec(number(), 0..12),
            same in number(),
        ) {
            let (a2, b2) = (a.clone(), b.clone());
            let boxed = ends_within(20, move || {
                boxes::box_plots(
                    &[("a".to_owned(), a2), ("b".to_owned(), b2), ("same".to_owned(), vec![same; 3])],
                    "s",
                    style::ONE_COLUMN,
                )
            });
            prop_assert!(boxed.is_ok(), "{boxed:?}");
            let (a2, b2) = (a.clone(), b.clone());
            let stacked = ends_within(20, move || {
                bars::stacked(
                    &[("a".to_owned(), a2), ("b".to_owned(), b2)],
                    &[("x".to_owned(), style::SERIES_COLOURS[0]), ("y".to_owned(), style::SERIES_COLOURS[1])],
                    "items",
                    style::ONE_COLUMN,
                )
            });
            prop_assert!(stacked.is_ok(), "{stacked:?}");
            let rows: Vec<(String, Vec<Option<f64>>)> = a
                .iter()
                .zip(b.iter())
                .enumerate()
                .map(|(i, (x, y))| (format!("g{i}"), vec![Some(*x), Some(*y)]))
                .collect();
            let grouped = ends_within(20, move || {
                bars::grouped(
                    &rows,
                    &[("x".to_owned(), style::SERIES_COLOURS[0]), ("y".to_owned(), style::SERIES_COLOURS[1])],
                    "drop",
                    style::ONE_COLUMN,
                )
            });
            prop_assert!(grouped.is_ok(), "{grouped:?}");
            let points: Vec<(f64, f64)> = a.iter().copied().zip(b.iter().copied()).collect();
            let curves = ends_within(20, move || {
                roc::roc_curves(&[("m".to_owned(), points)], style::ONE_COLUMN)
            });
            prop_assert!(curves.is_ok(), "{curves:?}");
        }
    }
}

/// The time figure counts what its table counts: with k = 5 and some items short of their
/// five votes, the caption's votes per level are the table's `by_level` counts (incomplete
/// items' votes drawn once made the figure say 6, 7, 7 where the table said 3, 3, 5).
#[test]
fn the_time_figure_counts_what_its_table_counts() {
    let mut data = synthetic::study(60, 11);
    data.ratings_per_item = Some(5);
    // every fourth item loses a vote: incomplete, out of the table and of the figure
    let mut seen = std::collections::HashMap::new();
    data.votes.retain(|v| {
        let n = seen.entry(v.item).or_insert(0usize);
        *n += 1;
        !(v.item % 4 == 0 && *n == 1)
    });
    let report = report_with(
        &data,
        &Options {
            bootstrap: 0,
            ..Options::default()
        },
    );
    let time = report.time.as_ref().expect("a time table");
    let figure = report_figures(&report)
        .expect("figures")
        .into_iter()
        .find(|f| f.id == "time_by_level")
        .expect("the time figure");
    for (level, ms) in &time.by_level {
        let said = format!("{level} {}", ms.n);
        assert!(figure.caption.contains(&said), "{said}: {}", figure.caption);
    }
    let drawn: usize = time.times_by_level.values().map(Vec::len).sum();
    assert_eq!(drawn, time.n, "the figure draws the table's votes");
    let all_timed = data.votes.iter().filter(|v| v.time_secs.is_some()).count();
    assert!(drawn < all_timed, "incomplete items' votes are not drawn");
}
