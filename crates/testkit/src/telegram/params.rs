//! Collecting Bot API call parameters from the query string and a JSON, urlencoded or
//! multipart body, and typed access to them.

use serde_json::{Map, Value};

use super::spec::decode_json;

/// Parameters of one call: JSON values (form and multipart values are strings).
pub type Params = Map<String, Value>;

/// Merges query-string parameters and body parameters (the body wins).
/// Returns the Bot API error description when the body cannot be read.
pub fn collect(
    query: Option<&str>,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Params, String> {
    let mut params = Params::new();
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            params.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(params);
    }
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    if ct.starts_with("application/json") {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(obj)) => params.extend(obj),
            Ok(_) | Err(_) => return Err("Bad Request: can't parse JSON object".into()),
        }
    } else if ct.starts_with("multipart/form-data") {
        let boundary = content_type
            .and_then(boundary_of)
            .ok_or_else(|| "Bad Request: can't parse multipart body: no boundary".to_owned())?;
        for (name, value) in parse_multipart(body, &boundary)? {
            params.insert(name, value);
        }
    } else {
        for (k, v) in url::form_urlencoded::parse(body) {
            params.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    Ok(params)
}

fn boundary_of(content_type: &str) -> Option<String> {
    content_type.split(';').find_map(|part| {
        let (k, v) = part.trim().split_once('=')?;
        k.eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || from > hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// A minimal `multipart/form-data` reader: text parts become strings, file parts become a
/// descriptive string (`attached file NAME (N bytes)`), which satisfies `InputFile`.
fn parse_multipart(body: &[u8], boundary: &str) -> Result<Vec<(String, Value)>, String> {
    let delim = format!("--{boundary}");
    let mut out = Vec::new();
    let mut pos = find(body, delim.as_bytes(), 0)
        .ok_or_else(|| "Bad Request: can't parse multipart body".to_owned())?
        + delim.len();
    loop {
        if body[pos..].starts_with(b"--") {
            break;
        }
        // Skip the CRLF after the delimiter.
        if body[pos..].starts_with(b"\r\n") {
            pos += 2;
        }
        let Some(headers_end) = find(body, b"\r\n\r\n", pos) else {
            break;
        };
        let headers = String::from_utf8_lossy(&body[pos..headers_end]).to_string();
        let content_start = headers_end + 4;
        let next = find(body, format!("\r\n{delim}").as_bytes(), content_start)
            .ok_or_else(|| "Bad Request: can't parse multipart body".to_owned())?;
        let content = &body[content_start..next];
        let mut name = None;
        let mut filename = None;
        for line in headers.lines() {
            let Some((h, v)) = line.split_once(':') else {
                continue;
            };
            if !h.trim().eq_ignore_ascii_case("content-disposition") {
                continue;
            }
            for part in v.split(';') {
                if let Some((k, val)) = part.trim().split_once('=') {
                    let val = val.trim().trim_matches('"').to_owned();
                    match k.trim() {
                        "name" => name = Some(val),
                        "filename" => filename = Some(val),
                        _ => {}
                    }
                }
            }
        }
        if let Some(name) = name {
            let value = match filename {
                Some(f) => format!("attached file {f} ({} bytes)", content.len()),
                None => String::from_utf8_lossy(content).into_owned(),
            };
            out.push((name, Value::String(value)));
        }
        pos = next + 2 + delim.len();
        if pos >= body.len() {
            break;
        }
    }
    Ok(out)
}

/// Typed accessors over [`Params`], lenient like Telegram (strings are parsed).
pub trait ParamsExt {
    /// An integer parameter.
    fn int(&self, name: &str) -> Option<i64>;
    /// A string parameter (numbers and booleans are stringified).
    fn string(&self, name: &str) -> Option<String>;
    /// A boolean parameter (`true`/`false`/`1`/`0`).
    fn boolean(&self, name: &str) -> Option<bool>;
    /// A JSON object or array parameter, possibly JSON-encoded in a string.
    fn json(&self, name: &str) -> Option<Value>;
}

impl ParamsExt for Params {
    fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    fn string(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    fn boolean(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => n.as_i64().map(|i| i != 0),
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "true" | "1" => Some(true),
                "false" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    fn json(&self, name: &str) -> Option<Value> {
        match self.get(name)? {
            Value::Null => None,
            v => decode_json(v),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn query_form_json_multipart() {
        let p = collect(
            Some("chat_id=5&text=q"),
            Some("application/x-www-form-urlencoded"),
            b"text=a%26b",
        )
        .unwrap();
        assert_eq!(p.int("chat_id"), Some(5));
        assert_eq!(p.string("text").as_deref(), Some("a&b"));

        let p = collect(
            None,
            Some("application/json"),
            br#"{"chat_id":-7,"disable_notification":true}"#,
        )
        .unwrap();
        assert_eq!(p.int("chat_id"), Some(-7));
        assert_eq!(p.boolean("disable_notification"), Some(true));
        assert!(collect(None, Some("application/json"), b"{nope").is_err());

        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"url\"\r\n\r\nhttp://h/x\r\n--XyZ\r\nContent-Disposition: form-data; name=\"certificate\"; filename=\"c.pem\"\r\nContent-Type: application/octet-stream\r\n\r\nABC\r\n--XyZ--\r\n";
        let p = collect(None, Some("multipart/form-data; boundary=XyZ"), body).unwrap();
        assert_eq!(p.string("url").as_deref(), Some("http://h/x"));
        assert_eq!(
            p.string("certificate").as_deref(),
            Some("attached file c.pem (3 bytes)")
        );
    }
}
