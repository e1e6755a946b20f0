//! Shaping an answer to conform exactly to a JSON schema (`response_format: json_schema`).

use serde_json::{Map, Value};

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut s = schema;
    for _ in 0..16 {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => s = target,
                None => return s,
            },
            None => return s,
        }
    }
    s
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ if schema.get("items").is_some() => vec!["array"],
        _ => Vec::new(),
    }
}

fn accepts(types: &[&str], v: &Value) -> bool {
    let t = json_type(v);
    types.contains(&t) || (t == "integer" && types.contains(&"number"))
}

/// Returns a value conforming to `schema`, taking values from `hint` where they fit.
pub(crate) fn conform(hint: Option<&Value>, schema: &Value, root: &Value, depth: u32) -> Value {
    let schema = resolve(schema, root);
    if depth > 32 {
        return hint.cloned().unwrap_or(Value::Null);
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(branches) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let pick = hint
            .and_then(|h| {
                branches
                    .iter()
                    .find(|b| accepts(&types_of(resolve(b, root)), h))
            })
            .or_else(|| branches.first());
        return match pick {
            Some(b) => conform(hint, b, root, depth + 1),
            None => hint.cloned().unwrap_or(Value::Null),
        };
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return match hint {
            Some(h) if options.contains(h) => h.clone(),
            _ => options.first().cloned().unwrap_or(Value::Null),
        };
    }
    let types = types_of(schema);
    if types.is_empty() {
        return hint.cloned().unwrap_or(Value::Null);
    }
    let ty = match hint {
        Some(h) if accepts(&types, h) => {
            let t = json_type(h);
            if types.contains(&t) { t } else { "number" }
        }
        // Nothing to say where null is allowed: null, as a model writes it.
        None | Some(Value::Null) if types.contains(&"null") => "null",
        _ => types
            .iter()
            .copied()
            .find(|t| *t != "null")
            .unwrap_or("null"),
    };
    match ty {
        "object" => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return match hint {
                    Some(h @ Value::Object(_)) => h.clone(),
                    _ => Value::Object(Map::new()),
                };
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            for (name, prop) in props {
                let h = hint.and_then(|h| h.get(name));
                if h.is_some() || required.contains(&name.as_str()) {
                    out.insert(name.clone(), conform(h, prop, root, depth + 1));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let items = schema.get("items").map(|i| resolve(i, root));
            let Some(Value::Array(hs)) = hint else {
                return Value::Array(Vec::new());
            };
            match items {
                None => Value::Array(hs.clone()),
                Some(item_schema) => {
                    let allowed = item_schema.get("enum").and_then(Value::as_array);
                    Value::Array(
                        hs.iter()
                            .filter(|h| allowed.is_none_or(|a| a.contains(h)))
                            .map(|h| conform(Some(h), item_schema, root, depth + 1))
                            .collect(),
                    )
                }
            }
        }
        "string" => match hint {
            Some(Value::String(s)) => Value::String(s.clone()),
            Some(Value::Null) | None => Value::String(String::new()),
            Some(other) => Value::String(other.to_string()),
        },
        "integer" => hint
            .and_then(Value::as_i64)
            .map_or(Value::from(0), Value::from),
        "number" => match hint {
            Some(n @ Value::Number(_)) => n.clone(),
            _ => Value::from(0),
        },
        "boolean" => Value::Bool(hint.and_then(Value::as_bool).unwrap_or(false)),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fills_filters_and_follows_refs() {
        let schema = json!({
            "type": "object",
            "properties": {"results": {"type": "array", "items": {"$ref": "#/$defs/r"}}},
            "required": ["results"],
            "additionalProperties": false,
            "$defs": {"r": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "is_job": {"type": "boolean"},
                    "kind": {"type": "string", "enum": ["job", "resume", "ad", "chatter"]},
                    "categories": {"type": "array", "items": {"type": "string", "enum": ["web", "design"]}},
                    "confidence": {"type": ["number", "null"]},
                    "reason": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                },
                "required": ["id", "is_job", "kind", "categories", "confidence", "reason"],
                "additionalProperties": false
            }}
        });
        let hint = json!({"results": [{"id": "1", "is_job": true, "kind": "job", "categories": ["web", "bots"]}]});
        let out = conform(Some(&hint), &schema, &schema, 0);
        assert_eq!(
            out,
            json!({"results": [{"id": "1", "is_job": true, "kind": "job", "categories": ["web"], "confidence": null, "reason": ""}]})
        );
    }
}
