//! The Bot API specification (Bot API 10.1, PaulSonOfLars/telegram-bot-api-spec format),
//! embedded at build time, and the parameter checks derived from it.

use std::{collections::HashMap, sync::LazyLock};

use serde::Deserialize;
use serde_json::Value;

use super::params::Params;

const SPEC_JSON: &str = include_str!("../../spec/bot-api-spec.json");

#[derive(Deserialize)]
struct RawSpec {
    methods: HashMap<String, RawMethod>,
}

#[derive(Deserialize)]
struct RawMethod {
    name: String,
    #[serde(default)]
    fields: Vec<FieldSpec>,
    #[serde(default)]
    returns: Vec<String>,
}

/// One parameter of a Bot API method.
#[derive(Debug, Clone, Deserialize)]
pub struct FieldSpec {
    /// Parameter name.
    pub name: String,
    /// Accepted types, e.g. `["Integer", "String"]` or `["Array of MessageEntity"]`.
    pub types: Vec<String>,
    /// Whether the parameter must be present.
    pub required: bool,
}

/// One Bot API method.
#[derive(Debug, Clone)]
pub struct MethodSpec {
    /// Canonical (camelCase) name.
    pub name: String,
    /// Parameters in the order of the documentation.
    pub fields: Vec<FieldSpec>,
    /// Return types, e.g. `["Message", "Boolean"]`.
    pub returns: Vec<String>,
}

/// All methods, keyed by lower-cased name (Telegram matches method names case-insensitively).
static SPEC: LazyLock<HashMap<String, MethodSpec>> =
    LazyLock::new(|| match serde_json::from_str::<RawSpec>(SPEC_JSON) {
        Ok(raw) => raw
            .methods
            .into_values()
            .map(|m| {
                (
                    m.name.to_ascii_lowercase(),
                    MethodSpec {
                        name: m.name,
                        fields: m.fields,
                        returns: m.returns,
                    },
                )
            })
            .collect(),
        Err(e) => {
            tracing::error!(error = %e, "embedded Bot API spec does not parse");
            HashMap::new()
        }
    });

/// Looks a method up by name, case-insensitively.
pub fn method(name: &str) -> Option<&'static MethodSpec> {
    SPEC.get(&name.to_ascii_lowercase())
}

/// Number of methods in the embedded spec.
#[cfg(test)]
pub fn method_count() -> usize {
    SPEC.len()
}

fn is_primitive(t: &str) -> bool {
    matches!(
        t,
        "Integer" | "String" | "Boolean" | "Float" | "True" | "InputFile"
    )
}

/// Parses a JSON value that may be JSON-encoded in a string (form and multipart bodies).
pub fn decode_json(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => serde_json::from_str(s).ok(),
        other => Some(other.clone()),
    }
}

fn matches_scalar(t: &str, v: &Value) -> bool {
    match t {
        "Integer" => match v {
            Value::Number(n) => n.is_i64() || n.is_u64(),
            Value::String(s) => s.trim().parse::<i64>().is_ok(),
            _ => false,
        },
        "Float" => match v {
            Value::Number(_) => true,
            Value::String(s) => s.trim().parse::<f64>().is_ok(),
            _ => false,
        },
        "Boolean" | "True" => match v {
            Value::Bool(_) => true,
            Value::Number(n) => matches!(n.as_i64(), Some(0 | 1)),
            Value::String(s) => {
                matches!(
                    s.to_ascii_lowercase().as_str(),
                    "true" | "false" | "1" | "0"
                )
            }
            _ => false,
        },
        // Telegram stringifies JSON scalars it receives for String parameters.
        "String" => matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)),
        "InputFile" => matches!(v, Value::String(_) | Value::Object(_)),
        _ => false,
    }
}

/// Does `v` fit the spec type `t` (`Integer`, `Array of X`, an object type name…)?
fn matches_type(t: &str, v: &Value) -> bool {
    if let Some(inner) = t.strip_prefix("Array of ") {
        let Some(Value::Array(items)) = decode_json(v) else {
            return false;
        };
        return items.iter().all(|item| matches_type(inner, item));
    }
    if is_primitive(t) {
        return matches_scalar(t, v);
    }
    matches!(decode_json(v), Some(Value::Object(_)))
}

fn type_error(method: &str, field: &FieldSpec, v: &Value) -> String {
    let types = &field.types;
    if field.name == "chat_id" && types.iter().any(|t| t == "String") {
        return "Bad Request: chat not found".into();
    }
    if field.name == "reply_markup" {
        return "Bad Request: can't parse reply keyboard markup JSON object".into();
    }
    if field.name.ends_with("entities") {
        return "Bad Request: can't parse entities JSON object".into();
    }
    let all_objects = types
        .iter()
        .all(|t| !is_primitive(t) && !t.starts_with("Array of "));
    if all_objects {
        return format!("Bad Request: can't parse {} JSON object", field.name);
    }
    tracing::debug!(method, field = %field.name, value = %v, "parameter of wrong type");
    format!(
        "Bad Request: field \"{}\" must be of type {}",
        field.name,
        types.join(" or ")
    )
}

fn missing_error(method: &str, field: &str) -> String {
    match (method, field) {
        ("sendMessage" | "editMessageText", "text") => "Bad Request: message text is empty".into(),
        (_, "chat_id") => "Bad Request: chat_id is empty".into(),
        (_, "message_id") => "Bad Request: message identifier is not specified".into(),
        (_, "callback_query_id") => "Bad Request: QUERY_ID_INVALID".into(),
        _ => format!("Bad Request: parameter \"{field}\" is required"),
    }
}

/// Checks `params` against the method's spec: required parameters present, values of the
/// documented types; unknown parameters are ignored, as Telegram does. Returns the Bot API
/// error description of the first violation.
pub fn validate(spec: &MethodSpec, params: &Params) -> Result<(), String> {
    for field in &spec.fields {
        match params.get(&field.name) {
            None | Some(Value::Null) => {
                if field.required {
                    return Err(missing_error(&spec.name, &field.name));
                }
            }
            Some(v) => {
                if !field.types.iter().any(|t| matches_type(t, v)) {
                    return Err(type_error(&spec.name, field, v));
                }
                if field.name == "chat_id"
                    && let Value::String(s) = v
                    && s.trim().parse::<i64>().is_err()
                    && !(s.starts_with('@') && s.len() > 1)
                {
                    return Err("Bad Request: chat not found".into());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Params {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn spec_loads_and_is_case_insensitive() {
        assert!(method_count() > 150);
        assert_eq!(method("SendMessage").unwrap().name, "sendMessage");
        assert!(method("sendNothing").is_none());
    }

    #[test]
    fn required_and_types() {
        let m = method("sendMessage").unwrap();
        assert_eq!(
            validate(m, &p(json!({"text": "x"}))).unwrap_err(),
            "Bad Request: chat_id is empty"
        );
        assert_eq!(
            validate(m, &p(json!({"chat_id": 1}))).unwrap_err(),
            "Bad Request: message text is empty"
        );
        assert!(validate(m, &p(json!({"chat_id": "12", "text": "x", "foo": [1]}))).is_ok());
        assert!(validate(m, &p(json!({"chat_id": "@chan", "text": 5}))).is_ok());
        assert_eq!(
            validate(m, &p(json!({"chat_id": "abc", "text": "x"}))).unwrap_err(),
            "Bad Request: chat not found"
        );
        assert_eq!(
            validate(
                m,
                &p(json!({"chat_id": 1, "text": "x", "disable_notification": "maybe"}))
            )
            .unwrap_err(),
            "Bad Request: field \"disable_notification\" must be of type Boolean"
        );
        assert_eq!(
            validate(
                m,
                &p(json!({"chat_id": 1, "text": "x", "reply_markup": "nope"}))
            )
            .unwrap_err(),
            "Bad Request: can't parse reply keyboard markup JSON object"
        );
        assert!(
            validate(
                m,
                &p(json!({"chat_id": 1, "text": "x", "reply_markup": "{\"inline_keyboard\":[]}"}))
            )
            .is_ok()
        );
        assert_eq!(
            validate(m, &p(json!({"chat_id": 1, "text": "x", "entities": [1]}))).unwrap_err(),
            "Bad Request: can't parse entities JSON object"
        );
        let g = method("getUpdates").unwrap();
        assert!(
            validate(
                g,
                &p(json!({"offset": "5", "allowed_updates": ["message"]}))
            )
            .is_ok()
        );
        assert!(validate(g, &p(json!({"allowed_updates": [{"a": 1}]}))).is_err());
    }
}
