//! Driving Chromium: chromedriver on a free port, a headless session, screenshots, and the
//! few steps every page needs (type, click, read, wait).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// chromedriver on a free port, killed when dropped.
pub struct Driver {
    pub child: tokio::process::Child,
    port: u16,
}

pub async fn driver() -> Driver {
    let path = std::env::var("JOBWIRE_TEST_CHROMEDRIVER").expect("JOBWIRE_TEST_CHROMEDRIVER");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new(&path)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {path}: {e}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "chromedriver did not listen on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Driver { child, port }
}

pub async fn browser(driver: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    let binary =
        std::env::var("JOBWIRE_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": binary,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--lang=en-US"],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a WebDriver session")
}

pub fn shots_dir() -> PathBuf {
    let dir = std::env::var_os("JOBWIRE_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots")
        });
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    std::fs::write(shots_dir().join(format!("{name}.png")), png).unwrap();
}

/// Waits until `check` holds (htmx swaps and page loads are asynchronous).
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Types `text` into the element at `at`.
pub async fn type_into(c: &Client, at: Locator<'_>, text: &str) {
    c.find(at).await.unwrap().send_keys(text).await.unwrap();
}

/// Clicks the element at `at`.
pub async fn click(c: &Client, at: Locator<'_>) {
    c.find(at).await.unwrap().click().await.unwrap();
}

pub async fn text_of(c: &Client, css: &str) -> String {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

pub async fn path(c: &Client) -> String {
    c.current_url().await.unwrap().path().to_owned()
}
