//! What every component's configuration section reports when a value is wrong: the key it is
//! about (`digest.time`, `placements.category_stars.web`) and why. Each crate keeps its own
//! `*Section` (the file's shape, with its defaults) beside the code it configures and
//! resolves it into its own checked config; the binary only gathers the sections.

/// A configuration value that cannot be used, naming its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct InvalidKey {
    /// The dotted key, as written in the file (`[digest] time` is `digest.time`).
    pub key: String,
    pub message: String,
}

impl InvalidKey {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InvalidKey;

    #[test]
    fn names_the_key_first() {
        let e = InvalidKey::new("digest.time", "\"25:00\" is not a time of day");
        assert_eq!(e.to_string(), "digest.time: \"25:00\" is not a time of day");
    }
}
