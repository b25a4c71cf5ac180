//! In a real headless Chromium: sign in, the page hydrates (a client-side interaction works),
//! sign out.

use fantoccini::Locator;
use natstudy_tests::browser::Browser;
use natstudy_tests::{fresh_db, Role, Store, TestApp};

#[tokio::test]
async fn sign_in_see_a_hydrated_page_and_sign_out() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db).await.expect("server");
    app.add_user("ada", "a-long-password", Role::Admin)
        .await
        .expect("user");
    let b = Browser::start().await.expect("browser");

    // a protected page sends us to sign in
    b.client.goto(&app.url("/admin/users")).await.expect("goto");
    let url = b.client.current_url().await.expect("url");
    assert_eq!(url.path(), "/login");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("login page hydrates");

    b.sign_in("ada", "a-long-password", "ada (admin)")
        .await
        .expect("signed in");
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("hydrated");
    assert_eq!(
        b.client.current_url().await.expect("url").path(),
        "/admin/users"
    );

    // the home page is one of the survey's: it gets the participants' small bundle; a link
    // to a staff page loads that page in full, with the full bundle, and it hydrates
    let bundle = |b: &Browser| {
        let c = b.client.clone();
        async move {
            let v = c
                .execute(
                    "return [...document.querySelectorAll('link')].map(l => l.getAttribute('href')).join(' ')",
                    vec![],
                )
                .await
                .expect("links");
            v.as_str().unwrap_or_default().to_owned()
        }
    };
    b.goto_hydrated(&app.url("/")).await.expect("home");
    let links = bundle(&b).await;
    assert!(links.contains("/pkg/natstudy_participant."), "{links}");
    b.click("a[href='/studies']").await.expect("studies link");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while b.client.current_url().await.expect("url").path() != "/studies"
        || !bundle(&b).await.contains("/pkg/natstudy.")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the studies page never loaded in full: {}",
            bundle(&b).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    b.wait_for_text("#hydrated", "interactive")
        .await
        .expect("the full page hydrates");
    b.goto_hydrated(&app.url("/admin/users"))
        .await
        .expect("users");

    // on a desktop the menu is shown whole: no menu button
    let toggle = b
        .client
        .find(Locator::Css("#menu-toggle"))
        .await
        .expect("toggle");
    assert!(
        !toggle.is_displayed().await.expect("displayed?"),
        "no Menu button on a desktop"
    );
    // a purely client-side interaction on a phone-sized window: the menu toggle
    b.client
        .set_window_size(390, 844)
        .await
        .expect("phone-sized window");
    b.wait_for_text("#menu-toggle", "Menu")
        .await
        .expect("menu button");
    b.client
        .find(Locator::Css("#menu-toggle"))
        .await
        .expect("toggle")
        .click()
        .await
        .expect("click");
    b.wait_for_text("#menu-toggle", "Close menu")
        .await
        .expect("menu toggled in the browser");

    // sign out
    b.client
        .find(Locator::Css("#logout"))
        .await
        .expect("logout")
        .click()
        .await
        .expect("click");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let path = b.client.current_url().await.expect("url").path().to_owned();
        if path == "/login" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not sent to /login after sign-out (at {path})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    b.client.goto(&app.url("/admin/users")).await.expect("goto");
    assert_eq!(b.client.current_url().await.expect("url").path(), "/login");
    b.close().await;
    let db = app.db.clone();
    drop(app);
    guard.drop_now(db).await;
}

/// A page rendered by a server of another build than its wasm (a proxy or cache mixing two
/// versions) is left as served: the wasm does not try to hydrate it (hydration would fail
/// part-way on views that differ) and the page says so. The same page unchanged hydrates, so
/// the test can tell the two apart.
#[tokio::test]
async fn a_page_from_another_build_is_left_as_served() {
    let (db, guard) = fresh_db(Store::Sqlite).await.expect("db");
    let app = TestApp::start(db.clone()).await.expect("server");
    let b = Browser::start().await.expect("browser");
    b.goto_hydrated(&app.url("/"))
        .await
        .expect("this build's page hydrates");
    // from now on each page's build id reads as another build's, changed as the page is
    // parsed, before its scripts run
    let mut other = app::BUILD_ID.to_owned();
    let last = if other.ends_with('0') { "1" } else { "0" };
    other.replace_range(other.len() - 1.., last);
    b.before_each_page(&format!(
        "new MutationObserver((_, seen) => {{ \
           const m = document.querySelector('meta[name=\"natstudy-build\"]'); \
           if (m) {{ m.setAttribute('content', '{other}'); seen.disconnect(); }} \
         }}).observe(document, {{ childList: true, subtree: true }});"
    ))
    .await
    .expect("a script before the page's");
    b.client.goto(&app.url("/")).await.expect("home again");
    b.wait_contains("#stale-build", "another version of natstudy")
        .await;
    let role = b
        .client
        .find(Locator::Css("#stale-build"))
        .await
        .expect("notice")
        .attr("role")
        .await
        .expect("attr");
    assert_eq!(role.as_deref(), Some("alert"));
    // given time, it stays as served
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(b.text_of("#hydrated").await, "static");
    b.close().await;
    drop(app);
    guard.drop_now(db).await;
}
