//! Category slugs: the closed set of labels a job can carry.

use std::fmt;

/// A category slug such as `web` or `bots`: lowercase ASCII letters, digits, `_` or `-`,
/// 1 to 32 characters. Parsed once at the edge; a value of this type is always valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CategorySlug(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid category slug {0:?}: use 1-32 lowercase letters, digits, '_' or '-'")]
pub struct InvalidCategory(pub String);

impl CategorySlug {
    pub fn parse(raw: &str) -> Result<Self, InvalidCategory> {
        let ok = !raw.is_empty()
            && raw.len() <= 32
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(InvalidCategory(raw.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CategorySlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for CategorySlug {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_checked() {
        assert!(CategorySlug::parse("web").is_ok());
        assert!(CategorySlug::parse("data-entry_2").is_ok());
        for bad in ["", "Web", "веб", "a b", "x".repeat(33).as_str(), "<b>"] {
            assert!(CategorySlug::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
