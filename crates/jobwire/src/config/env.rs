//! [`Environment`]: where secrets are read from ([`ProcessEnv`], or a fake in tests).

/// Reads an environment variable; a seam so tests can resolve without touching the process
/// environment.
pub trait Environment {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}
