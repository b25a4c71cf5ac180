//! The results page as a researcher reads it (#42), in headless Chromium: on a phone (390 px)
//! nothing is wider than the page (tables scroll inside their cards, figures scale to the
//! width, a two-column figure keeps its size and scrolls in its card, by the arrow keys too:
//! every label at least 10 px high), and on a laptop (1366 px) every figure's text — tick
//! labels, axis titles and the legend — lies inside its image; each figure offers its SVG, PDF
//! and PNG, each table its CSV and LaTeX, and the page one zip of everything.

use fantoccini::Locator;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, Role, Store, TestApp};

const PW: &str = "a-long-password";

/// What the page measures: `[scrollWidth, innerWidth, figures, texts outside their figure,
/// figures wider than the page (a figure's box: a wide one scrolls in it), download links]`,
/// the first texts outside, and the lowest text of a figure on screen (px) with its figure.
const MEASURE: &str = r#"
const outside = [];
let wide = 0;
let lowest = [1e9, ''];
const figures = document.querySelectorAll('figure.chart');
for (const f of figures) {
  const svg = f.querySelector('svg');
  if (!svg) { outside.push(f.id + ': no image'); continue; }
  const box = svg.getBoundingClientRect();
  const shown = f.querySelector('.chart-image').getBoundingClientRect();
  if (shown.right > window.innerWidth + 1 || shown.left < -1) wide++;
  for (const t of svg.querySelectorAll('text')) {
    if (!t.textContent.trim()) continue;
    const r = t.getBoundingClientRect();
    if (r.height < lowest[0]) lowest = [r.height, f.id + ': ' + t.textContent.trim()];
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
      outside.push(f.id + ': ' + t.textContent.trim());
    }
  }
}
const links = document.querySelectorAll('figure.chart a[href$=".pdf"], a[href$=".tex"], a[href$="paper.zip"]').length;
return [document.documentElement.scrollWidth, window.innerWidth, figures.length, outside.length, wide, links, outside.slice(0, 5).join('; '), lowest[0], lowest[1]];
"#;

async fn measure(width: u32, height: u32) -> (serde_json::Value, f64, serde_json::Value) {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy_tests::reference_study_with_results(&db, "Paper")
        .await
        .expect("study");
    let app = TestApp::start(db.clone()).await.expect("server");
    app.add_user("rita", PW, Role::Admin).await.expect("user");
    let b = Browser::start_sized(width, height).await.expect("browser");
    b.open_as(
        &app.base,
        &format!("/studies/{study}/results"),
        ("rita", PW, "rita (admin)"),
    )
    .await
    .expect("results");
    b.wait_contains("#results-tables", "Robustness of repair tools")
        .await;
    let measured = b.client.execute(MEASURE, vec![]).await.expect("measure");
    let keyed = arrow_right_scrolls(&b).await;
    // per wide figure: whether it scrolls, whether a cue above it says so
    let cues = b
        .client
        .execute(
            "return [...document.querySelectorAll('figure.chart.wide')].map(f => { \
               const img = f.querySelector('.chart-image'); const cue = f.querySelector('.scroll-cue'); \
               return [img.scrollWidth > img.clientWidth, !!cue && cue.offsetParent !== null \
                       && cue.getBoundingClientRect().bottom <= img.getBoundingClientRect().top + 1]; })",
            vec![],
        )
        .await
        .expect("cues");
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
    (measured, keyed, cues)
}

/// How far the right arrow key scrolls the first wide figure's box, focused as a keyboard
/// user reaches it (px; waits out the smooth scroll).
async fn arrow_right_scrolls(b: &Browser) -> f64 {
    let chart = b
        .client
        .find(Locator::Css("figure.chart.wide .chart-image"))
        .await
        .expect("a wide figure");
    assert_eq!(
        chart.attr("tabindex").await.expect("attr").as_deref(),
        Some("0"),
        "a wide figure's box takes the focus"
    );
    for _ in 0..4 {
        chart.send_keys("\u{e014}").await.expect("arrow right");
    }
    let mut left = 0.0;
    for _ in 0..20 {
        left = b
            .client
            .execute(
                "return document.querySelector('figure.chart.wide .chart-image').scrollLeft",
                vec![],
            )
            .await
            .expect("js")
            .as_f64()
            .unwrap_or(0.0);
        if left > 0.0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    left
}

#[tokio::test]
async fn the_results_fit_a_phone_and_every_figure_holds_its_legend() {
    for (width, height, device) in [(390, 844, "phone"), (1366, 900, "laptop")] {
        let (m, keyed, cues) = measure(width, height).await;
        // a figure that scrolls says so above it; one that fits says nothing
        for cue in cues.as_array().expect("figures") {
            assert_eq!(cue[0], cue[1], "{device}: a wide figure's cue: {cues}");
        }
        assert!(
            width > 700
                || cues
                    .as_array()
                    .is_some_and(|c| c.iter().any(|x| x[0] == true)),
            "{device}: no wide figure scrolls: {cues}"
        );
        let n = |i: usize| m[i].as_u64().unwrap_or(u64::MAX);
        assert!(
            n(0) <= n(1),
            "{device}: the page is {} px wide in {} px",
            n(0),
            n(1)
        );
        assert!(n(2) >= 8, "{device}: {} figures", n(2));
        assert_eq!(n(3), 0, "{device}: text outside its figure: {}", m[6]);
        assert_eq!(n(4), 0, "{device}: figures wider than the page");
        // every label legible: a wide figure is not shrunk to a phone's width
        let lowest = m[7].as_f64().unwrap_or(0.0);
        assert!(
            lowest >= 10.0,
            "{device}: a label {lowest:.1} px high ({})",
            m[8]
        );
        // a figure too wide for a phone scrolls by keyboard too; on a laptop it fits
        if width < 700 {
            assert!(keyed > 0.0, "{device}: the arrow key scrolled {keyed} px");
        } else {
            assert_eq!(keyed, 0.0, "{device}: a figure that fits does not scroll");
        }
        // a PDF per figure, the LaTeX of each table, the zip
        assert!(n(5) >= n(2) + 5, "{device}: {} download links", n(5));
    }
}
