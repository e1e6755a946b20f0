//! Measures how many `sendMessage` calls per second the fake Bot API sustains on loopback.
//!
//! `cargo run --release -p jobwire-testkit --example send_load -- [requests] [concurrency]`

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig};
use tokio::sync::Semaphore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let total: usize = args.next().map_or(Ok(20_000), |a| a.parse())?;
    let concurrency: usize = args.next().map_or(Ok(64), |a| a.parse())?;
    let fake = FakeTelegram::start(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        FakeTelegramConfig {
            limits: None,
            ..FakeTelegramConfig::default()
        },
    )
    .await?;
    let url = format!(
        "{}bot123:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage",
        fake.url()
    );
    let http = reqwest012::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .timeout(Duration::from_secs(30))
        .build()?;
    let sem = Arc::new(Semaphore::new(concurrency));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        let permit = Arc::clone(&sem).acquire_owned().await?;
        let http = http.clone();
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let body = serde_json::json!({
                "chat_id": i64::try_from(i % 5000).unwrap_or(0) + 1,
                "text": format!("<b>Vacancy {i}</b>\nRust developer, remote &amp; paid. <a href=\"https://example.com/{i}\">Apply</a> #rust"),
                "parse_mode": "HTML",
                "reply_markup": {"inline_keyboard": [[{"text": "Not a job", "callback_data": format!("r:{i}")}]]},
            });
            let ok = http
                .post(&url)
                .json(&body)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            drop(permit);
            ok
        }));
    }
    let mut ok = 0usize;
    for t in tasks {
        if t.await? {
            ok += 1;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{ok}/{total} accepted in {secs:.2} s = {:.0} sendMessage/s (concurrency {concurrency}); recorded {}",
        total as f64 / secs,
        fake.stats().accepted
    );
    Ok(())
}
