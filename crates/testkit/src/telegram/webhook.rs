//! A minimal HTTP/1.1 client for webhook delivery to plain `http://` URLs.
//!
//! Kept dependency-free on purpose: an HTTP client crate built with `rustls-no-provider`
//! (as the workspace's async-openai enables) would panic without a process-wide crypto
//! provider, and webhook receivers in tests listen on loopback without TLS.

use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// POSTs `body` as JSON to `url`; returns the response status code or a Telegram-like
/// `last_error_message`.
pub async fn post_json(url: &str, secret: Option<&str>, body: &Value) -> Result<u16, String> {
    let u = url::Url::parse(url).map_err(|_| "Invalid webhook URL".to_owned())?;
    if u.scheme() != "http" {
        return Err(
            "SSL error: the jobwire fake Bot API delivers webhooks over plain HTTP only".into(),
        );
    }
    let host = u
        .host_str()
        .ok_or_else(|| "Invalid webhook URL".to_owned())?;
    let port = u.port_or_known_default().unwrap_or(80);
    let mut stream = TcpStream::connect((host.trim_matches(['[', ']']), port))
        .await
        .map_err(|_| "Connection refused".to_owned())?;
    let payload = body.to_string();
    let path = match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_owned(),
    };
    let host_header = match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    };
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {host_header}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        payload.len()
    );
    if let Some(s) = secret {
        req.push_str(&format!("X-Telegram-Bot-Api-Secret-Token: {s}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&payload);
    stream
        .write_all(req.as_bytes())
        .await
        .map_err(|e| format!("Webhook write failed: {e}"))?;
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 256];
    while !buf.windows(2).any(|w| w == b"\r\n") {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("Webhook read failed: {e}"))?;
        if n == 0 {
            return Err("Connection closed by the webhook".into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > 8192 {
            break;
        }
    }
    let line = String::from_utf8_lossy(&buf);
    line.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| "Wrong response from the webhook: malformed status line".to_owned())
}
