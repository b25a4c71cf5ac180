//! Headless Chromium through chromedriver (Debian's packages), driven with fantoccini.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use fantoccini::{Client, ClientBuilder};

/// A chromedriver process and a browser session; both end when this is dropped — Chromium too,
/// even when a test fails midway: chromedriver runs in a process group of its own (which the
/// Chromium it starts joins), and the whole group is killed.
pub struct Browser {
    pub client: Client,
    driver: Option<Child>,
    _profile: tempfile::TempDir,
    /// How long the waits for text wait: longer on an emulated slow link.
    patience: Duration,
}

/// A DevTools protocol command, through ChromeDriver's `goog/cdp/execute`.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: serde_json::Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl Browser {
    /// A browser whose window is `width` × `height` (a phone: 390 × 844; a laptop: 1366 × 900).
    pub async fn start_sized(width: u32, height: u32) -> Result<Browser> {
        let b = Browser::start().await?;
        b.client.set_window_size(width, height).await?;
        Ok(b)
    }

    pub async fn start() -> Result<Browser> {
        Browser::start_with(true).await
    }

    /// A browser with JavaScript off (Chromium's content setting): pages are what the server
    /// rendered, forms post as plain HTML forms.
    pub async fn start_without_javascript(width: u32, height: u32) -> Result<Browser> {
        let b = Browser::start_with(false).await?;
        b.client.set_window_size(width, height).await?;
        Ok(b)
    }

    async fn start_with(javascript: bool) -> Result<Browser> {
        let port = free_port()?;
        // NATSTUDY_BROWSER_LOG=FILE: chromedriver's log with the page's console (hydration errors)
        let log = std::env::var("NATSTUDY_BROWSER_LOG").ok();
        let mut cmd = Command::new("chromedriver");
        if let Some(path) = &log {
            cmd.arg(format!("--log-path={path}"))
                .arg("--enable-chrome-logs");
        }
        let driver = cmd
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start chromedriver (apt-get install chromium chromium-driver; scripts/setup --browser does it)")?;
        let profile = tempfile::tempdir()?;
        let mut args = vec![
            "--headless".to_owned(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1280,900".into(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        if log.is_some() {
            args.extend(["--enable-logging=stderr".into(), "--v=0".into()]);
        }
        // 2: blocked (the setting a user's "Don't allow sites to use JavaScript" writes)
        let prefs = if javascript {
            serde_json::json!({})
        } else {
            serde_json::json!({ "profile.managed_default_content_settings.javascript": 2 })
        };
        let caps = serde_json::json!({
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": args,
                "prefs": prefs
            }
        });
        let caps = match caps {
            serde_json::Value::Object(m) => m,
            _ => unreachable!("literal object"),
        };
        let url = format!("http://127.0.0.1:{port}");
        let mut last = None;
        for _ in 0..50 {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => {
                    return Ok(Browser {
                        client,
                        driver: Some(driver),
                        _profile: profile,
                        patience: Duration::from_secs(20),
                    });
                }
                Err(e) => {
                    last = Some(e);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        end_group(driver);
        Err(anyhow::anyhow!("cannot start a Chromium session: {last:?}"))
    }

    /// A slow link, emulated by Chromium's network conditions (the DevTools protocol): every
    /// request `latency_ms` later, `kbit_per_s` down and up, and the cache off (every page load
    /// fetches its wasm again, as a first visit does). The waits for text wait longer.
    pub async fn throttle(&mut self, latency_ms: u32, kbit_per_s: u32) -> Result<()> {
        self.network(latency_ms, Some(kbit_per_s), kbit_per_s, true)
            .await
    }

    /// A slow uplink only: what the browser sends goes at `kbit_per_s`, pages and answers
    /// come at full speed (an upload from home over a link far slower up than down).
    pub async fn throttle_upload(&mut self, kbit_per_s: u32) -> Result<()> {
        self.network(0, None, kbit_per_s, false).await
    }

    /// Chromium's network conditions: `down` unlimited when `None`.
    async fn network(
        &mut self,
        latency_ms: u32,
        down: Option<u32>,
        up: u32,
        cache_off: bool,
    ) -> Result<()> {
        let bytes_per_s = |kbit: u32| f64::from(kbit) * 1000.0 / 8.0;
        for (cmd, params) in [
            ("Network.enable", serde_json::json!({})),
            (
                "Network.setCacheDisabled",
                serde_json::json!({ "cacheDisabled": cache_off }),
            ),
            (
                "Network.emulateNetworkConditions",
                serde_json::json!({
                    "offline": false,
                    "latency": latency_ms,
                    "downloadThroughput": down.map_or(-1.0, bytes_per_s),
                    "uploadThroughput": bytes_per_s(up),
                }),
            ),
        ] {
            self.client
                .issue_cmd(Cdp { cmd, params })
                .await
                .with_context(|| format!("DevTools {cmd}"))?;
        }
        self.patience = Duration::from_secs(180);
        Ok(())
    }

    /// A touch screen: Chromium's touch emulation, under which pages match `(hover: none)`
    /// and `(pointer: coarse)` as a phone's do.
    pub async fn touch(&self) -> Result<()> {
        let cmd = "Emulation.setTouchEmulationEnabled";
        self.client
            .issue_cmd(Cdp {
                cmd,
                params: serde_json::json!({ "enabled": true, "maxTouchPoints": 5 }),
            })
            .await
            .with_context(|| format!("DevTools {cmd}"))?;
        Ok(())
    }

    /// Runs `script` in every page this browser loads from now on, before the page's own
    /// scripts (Chromium's `Page.addScriptToEvaluateOnNewDocument`).
    pub async fn before_each_page(&self, script: &str) -> Result<()> {
        self.client
            .issue_cmd(Cdp {
                cmd: "Page.addScriptToEvaluateOnNewDocument",
                params: serde_json::json!({ "source": script }),
            })
            .await
            .context("DevTools Page.addScriptToEvaluateOnNewDocument")?;
        Ok(())
    }

    /// Chooses the file at `path` in the file input `css` (Chromium takes a canonical path
    /// only; several paths, one per line, for a `multiple` input).
    pub async fn choose_file(&self, css: &str, path: &std::path::Path) -> Result<()> {
        let path = path
            .canonicalize()
            .with_context(|| format!("{}", path.display()))?;
        self.client
            .find(fantoccini::Locator::Css(css))
            .await?
            .send_keys(&path.display().to_string())
            .await?;
        Ok(())
    }

    /// Waits until `css` matches an element whose text is exactly `text`.
    pub async fn wait_for_text(&self, css: &str, text: &str) -> Result<()> {
        let deadline = std::time::Instant::now() + self.patience;
        loop {
            if let Ok(el) = self.client.find(fantoccini::Locator::Css(css)).await {
                if el.text().await.map(|t| t.trim() == text).unwrap_or(false) {
                    return Ok(());
                }
            }
            if std::time::Instant::now() > deadline {
                let seen = match self.client.find(fantoccini::Locator::Css(css)).await {
                    Ok(el) => el.text().await.unwrap_or_default(),
                    Err(_) => "(no such element)".into(),
                };
                let url = self
                    .client
                    .current_url()
                    .await
                    .map(|u| u.to_string())
                    .unwrap_or_default();
                let body = match self.client.find(fantoccini::Locator::Css("body")).await {
                    Ok(el) => el.text().await.unwrap_or_default(),
                    Err(_) => String::new(),
                };
                anyhow::bail!("timed out waiting for {css} to read {text:?}; it reads {seen:?} (at {url}; page text: {body:?})");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Opens `base + path` through the sign-in page as that user and waits for hydration.
    pub async fn open_as(&self, base: &str, path: &str, user: (&str, &str, &str)) -> Result<()> {
        self.client
            .goto(&format!("{base}/login?next={path}"))
            .await?;
        self.sign_in(user.0, user.1, user.2).await?;
        self.wait_for_text("#hydrated", "interactive").await
    }

    /// Clicks the element `css` matches.
    pub async fn click(&self, css: &str) -> Result<()> {
        self.client
            .find(fantoccini::Locator::Css(css))
            .await?
            .click()
            .await?;
        Ok(())
    }

    /// Fills in and submits the sign-in form on the current page, then waits until the header
    /// names the user as `who` (e.g. "ada (admin)").
    pub async fn sign_in(&self, username: &str, password: &str, who: &str) -> Result<()> {
        use fantoccini::Locator;
        self.wait_for_text("#hydrated", "interactive").await?;
        self.client
            .find(Locator::Css("#username"))
            .await?
            .send_keys(username)
            .await?;
        self.client
            .find(Locator::Css("#password"))
            .await?
            .send_keys(password)
            .await?;
        self.client
            .find(Locator::Css("#login-submit"))
            .await?
            .click()
            .await?;
        self.wait_for_text("#who", who).await
    }

    /// The text of the element `css` matches ("" when there is none).
    pub async fn text_of(&self, css: &str) -> String {
        match self.client.find(fantoccini::Locator::Css(css)).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Waits until the study page's latest background job (`#jobs .job-state`) reads `done`;
    /// panics as soon as it reads "failed", or with what it reads after `within`. A job is CPU
    /// work whose time depends on the machine's load (the tests run side by side): its bound
    /// is the caller's, not the 30 s of a page's reaction.
    pub async fn wait_for_job(&self, done: &str, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        loop {
            let state = self.text_of("#jobs .job-state").await;
            if state.contains(done) {
                return;
            }
            assert!(
                !state.starts_with("failed") && std::time::Instant::now() < deadline,
                "the job never read {done:?}; it reads {state:?}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// Waits (30 s at most) until the element `css` matches contains `needle`; panics with
    /// what it reads otherwise.
    pub async fn wait_contains(&self, css: &str, needle: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let t = self.text_of(css).await;
            if t.contains(needle) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{css} never contained {needle:?}; it reads {t:?}"
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Sends keys to the page itself, nothing focused (as a keyboard user outside any field).
    pub async fn press(&self, keys: &str) -> Result<()> {
        self.client
            .execute(
                "document.activeElement && document.activeElement.blur()",
                vec![],
            )
            .await?;
        self.client
            .find(fantoccini::Locator::Css("body"))
            .await?
            .send_keys(keys)
            .await?;
        Ok(())
    }

    /// On an invite link's page: takes part, answers the default screener, consents and starts
    /// rating; returns once the first item is on screen.
    pub async fn join_consent_and_start(&self) -> Result<()> {
        self.join_and_consent("1-3", true).await?;
        self.wait_for_text("#start", "Start rating").await?;
        self.click("#start").await?;
        // "Submit (Enter)", or "Submit" on a touch screen
        self.client
            .wait()
            .at_most(self.patience)
            .for_element(fantoccini::Locator::Css("#submit"))
            .await?;
        Ok(())
    }

    /// On an invite link's page: takes part, answers the default screener (`years` of Java,
    /// a developer's role) and consents. `scripted`: the page hydrates first (without
    /// JavaScript it is a plain form, sent as it is).
    pub async fn join_and_consent(&self, years: &str, scripted: bool) -> Result<()> {
        self.click("#join").await?;
        self.wait_for_text("#consent-submit", "I agree and continue")
            .await?;
        if scripted {
            self.wait_for_text("#hydrated", "interactive").await?;
        }
        for css in [
            format!("#screener-years option[value='{years}']"),
            "#screener-role option[value='developer']".to_owned(),
        ] {
            self.click(&css).await?;
        }
        self.click("#consent-submit").await?;
        Ok(())
    }

    /// [`Browser::join_consent_and_start`] on a page without JavaScript, up to the click on
    /// "Start rating".
    pub async fn join_consent_and_start_without_javascript(&self) -> Result<()> {
        self.join_and_consent("1-3", false).await?;
        self.wait_for_text("#start", "Start rating").await?;
        self.click("#start").await
    }

    /// With `NATSTUDY_SCREENSHOTS=DIR` set, keeps what the window shows as `DIR/NAME` (a PNG),
    /// to look at; without it, nothing.
    pub async fn keep_screenshot(&self, name: &str) {
        if let Ok(dir) = std::env::var("NATSTUDY_SCREENSHOTS") {
            let png = self.client.screenshot().await.expect("screenshot");
            std::fs::write(std::path::Path::new(&dir).join(name), png).expect("write");
        }
    }

    /// How far the current page scrolls sideways, in CSS pixels: 0 or less where it fits its
    /// window.
    pub async fn sideways(&self) -> Result<f64> {
        let v = self
            .client
            .execute(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
                vec![],
            )
            .await?;
        v.as_f64().context("scrollWidth is a number")
    }

    /// Loads `url` (a full page load) and waits for hydration.
    pub async fn goto_hydrated(&self, url: &str) -> Result<()> {
        self.client.goto(url).await?;
        self.wait_for_text("#hydrated", "interactive").await
    }

    /// The axe-core (`.tools/node_modules/axe-core`, installed by `scripts/setup`) violations
    /// of impact serious or critical on the current page, each as `id: help (n nodes: first
    /// target)`. WCAG 2.x A and AA rules.
    pub async fn axe_serious(&self) -> Result<Vec<String>> {
        let script = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../.tools/node_modules/axe-core/axe.min.js"),
        )
        .context("axe-core is not installed: run scripts/setup")?;
        self.client.execute(&script, vec![]).await?;
        let found = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1]; \
                 axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']}}) \
                   .then(r => done(r.violations \
                     .filter(v => v.impact === 'serious' || v.impact === 'critical') \
                     .map(v => v.id + ': ' + v.help + ' (' + v.nodes.length + ' nodes: ' + \
                       v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' [' + n.html.slice(0, 80) + ' ' + ((document.querySelector(n.target[0]) || {}).textContent || '').slice(0, 60) + ']').join(' | ') + ')'))) \
                   .catch(e => done(['axe failed: ' + e]));",
                vec![],
            )
            .await?;
        Ok(serde_json::from_value(found)?)
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
        // Drop ends chromedriver's process group
    }
}

/// Kills chromedriver's process group (chromedriver and every Chromium process it started)
/// and reaps chromedriver.
fn end_group(mut driver: Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", driver.id())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = driver.kill();
    let _ = driver.wait();
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.take() {
            end_group(driver);
        }
    }
}
