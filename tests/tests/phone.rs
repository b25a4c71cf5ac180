//! The survey on a phone-sized screen (390 × 844) in headless Chromium: the transformed code
//! is readable without scrolling the page sideways, and each new item starts at the top.

use fantoccini::Locator;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, open_queue, Store, TestApp};

/// Two items of a method with a long line (wider than a phone).
fn study_files() -> (String, String) {
    let long = "        return values.length + offset + Math.max(first, second) + Math.min(third, fourth) + limit;";
    let method = |name: &str| {
        format!("    int size(int[] values, int {name}) {{\n{long}\n    }}\n")
            .replace("offset", name)
    };
    let bug = serde_json::json!({"bug_id": "Lang-1", "project": "Lang", "file": "A.java",
        "method": "size", "source": method("offset"), "buggy_lines": [2]});
    let items: String = ["o", "shift"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            serde_json::json!({"id": format!("naming_{}", i + 1), "bug_id": "Lang-1",
                "operator": "RenameVariable-1", "level": "naming", "source": method(n),
                "summary": format!("renames `offset` to `{n}`")})
            .to_string()
                + "\n"
        })
        .collect();
    (bug.to_string(), items)
}

async fn js(b: &Browser, script: &str) -> serde_json::Value {
    b.client.execute(script, vec![]).await.expect("script")
}

#[tokio::test]
async fn a_phone_reads_the_transformed_code_and_each_item_from_the_top() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let study = natstudy::store::studies::create(&db, None, "Phone", "")
        .await
        .expect("study");
    let (bugs, items) = study_files();
    natstudy::service::import_items_text(&db, study, None, ("b", &bugs), ("t", &items))
        .await
        .expect("items");
    let (_, token) = open_queue(&db, study, 5).await.expect("queue");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start().await.expect("browser");
    b.client
        .set_window_size(390, 844)
        .await
        .expect("phone-sized window");
    b.client
        .goto(&app.url(&format!("/join/{token}")))
        .await
        .expect("goto");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    b.click("#join").await.expect("join");
    b.wait_for_text("#consent-submit", "I agree and continue")
        .await
        .expect("consent page");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    for css in [
        "#screener-years option[value='1-3']",
        "#screener-role option[value='developer']",
    ] {
        b.click(css).await.expect("answer");
    }
    b.click("#consent-submit").await.expect("consent");
    b.wait_for_text("#start", "Start rating")
        .await
        .expect("guideline");
    b.click("#start").await.expect("start");
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("rating view");

    // NATSTUDY_SCREENSHOTS=DIR keeps what the phone showed, to look at
    if let Ok(dir) = std::env::var("NATSTUDY_SCREENSHOTS") {
        let png = b.client.screenshot().await.expect("screenshot");
        std::fs::write(std::path::Path::new(&dir).join("phone-rating.png"), png).expect("write");
    }
    // unified by default on a phone, and nothing wider than the screen
    b.client
        .find(Locator::Css("table.diff.unified"))
        .await
        .expect("the unified view is the phone's default");
    let overflow = js(
        &b,
        "return document.documentElement.scrollWidth - window.innerWidth",
    )
    .await;
    assert!(
        overflow.as_f64().is_some_and(|o| o <= 0.0),
        "the page scrolls sideways by {overflow}"
    );
    // the transformed line is inside the screen, whole
    let right = js(
        &b,
        "const cells = document.querySelectorAll('table.diff td.code.add'); \
         return Math.max(...Array.from(cells).map(c => c.getBoundingClientRect().right));",
    )
    .await;
    assert!(
        right.as_f64().is_some_and(|r| r > 0.0 && r <= 390.0),
        "transformed code ends at {right} px on a 390 px screen"
    );

    // scrolled down to the questions, answered: the next item starts at the top
    js(
        &b,
        "window.scrollTo(0, document.body.scrollHeight); return null",
    )
    .await;
    let scrolled = js(&b, "return window.scrollY").await;
    assert!(scrolled.as_f64().is_some_and(|y| y > 0.0), "{scrolled}");
    b.click("#cr-1").await.expect("cr");
    b.click("#cc-2").await.expect("cc");
    b.click("#submit").await.expect("submit");
    b.wait_for_text("#progress", "1 / 2")
        .await
        .expect("next item");
    b.wait_for_text("#submit", "Submit (Enter)")
        .await
        .expect("rating view");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let y = js(&b, "return window.scrollY").await;
        if y.as_f64() == Some(0.0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the next item opened scrolled to {y}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // the same browser reopening the invite link continues as the same participant
    let code = b.text_of("#resume-code").await;
    assert_eq!(code.len(), 11, "a resume code is on the page: {code:?}");
    let who = b.text_of(".survey-head .muted").await;
    b.goto_hydrated(&app.url(&format!("/join/{token}")))
        .await
        .expect("invite again");
    b.wait_contains("#invite-continuing", "continue where you left off")
        .await;
    b.click("#join").await.expect("continue");
    b.wait_for_text("#progress", "1 / 2")
        .await
        .expect("same count");
    // another device (a laptop-sized browser) continues with the resume code
    let laptop = Browser::start().await.expect("browser");
    laptop
        .client
        .set_window_size(1366, 900)
        .await
        .expect("laptop-sized window");
    laptop
        .goto_hydrated(&app.url("/resume"))
        .await
        .expect("resume page");
    laptop
        .client
        .find(Locator::Css("#resume-input"))
        .await
        .expect("input")
        .send_keys(&code.to_lowercase())
        .await
        .expect("type");
    laptop.click("#resume-submit").await.expect("resume");
    laptop
        .wait_for_text("#progress", "1 / 2")
        .await
        .expect("the same participant's count");
    assert_eq!(laptop.text_of(".survey-head .muted").await, who);
    assert_eq!(laptop.text_of("#resume-code").await, code);
    laptop.close().await;
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}
