//! Where the work is done: [`WorkMode`] and finding it in a post's text. Remote, on-site
//! and hybrid words are looked for outside handles, links and forwarding headers and not
//! after a negation (`без офиса`); remote and on-site both mentioned make hybrid.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::text::{is_forward_header, regex};

/// Where the work is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkMode {
    Remote,
    OnSite,
    Hybrid,
}

impl WorkMode {
    /// A short lowercase label: `remote`, `on-site`, `hybrid`.
    pub fn label(self) -> &'static str {
        match self {
            WorkMode::Remote => "remote",
            WorkMode::OnSite => "on-site",
            WorkMode::Hybrid => "hybrid",
        }
    }
}

static HYBRID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(?:гибрид\w*|hybrid|частично удал\w*|partially remote|partly remote)")
});
static REMOTE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:удал[её]нн\w*|удал[её]нк\w*|удал[её]нщик\w*|remote\w*|дистанц\w*|\bwfh\b|work from home|из дома|from anywhere|work from anywhere)",
    )
});
static ON_SITE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:\bофис\w*|\bon-?site\b|\bin-?office\b|\boffice-based\b|\bin[- ]person\b|\bочно\b|\bочная\b|\bрелокац\w*|\brelocat\w*)",
    )
});
static NEGATION_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(?:\bбез|\bне|\bno|\bnot|\bnon)[\s-]*(?:в\s+|in\s+|an\s+|the\s+)?$")
});

/// Whether some match of `re` is a real mention: not part of a handle, link or hashtag-less
/// word run, and not negated (`без офиса`, `no remote`).
fn mentions(re: &Regex, text: &str) -> bool {
    re.find_iter(text).any(|m| {
        let before = &text[..m.start()];
        let prev = before.chars().next_back();
        if prev.is_some_and(|c| c.is_alphanumeric() || matches!(c, '@' | '/' | '_' | '.')) {
            return false;
        }
        let window: String = before
            .chars()
            .rev()
            .take(12)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        !NEGATION_BEFORE.is_match(&window)
    })
}

pub(super) fn work_mode_of(text: &str) -> Option<WorkMode> {
    // Forwarding headers name channels ("Forwarded from Remote IT Jobs"), not the job.
    let body: String = text
        .lines()
        .filter(|l| !is_forward_header(l))
        .collect::<Vec<_>>()
        .join("\n");
    if mentions(&HYBRID, &body) {
        return Some(WorkMode::Hybrid);
    }
    match (mentions(&REMOTE, &body), mentions(&ON_SITE, &body)) {
        (true, true) => Some(WorkMode::Hybrid),
        (true, false) => Some(WorkMode::Remote),
        (false, true) => Some(WorkMode::OnSite),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::extract_work_mode;

    #[test]
    fn work_modes() {
        let m = |t: &str| extract_work_mode(t);
        assert_eq!(m("Работа удалённо, гибкий график"), Some(WorkMode::Remote));
        assert_eq!(m("#удалёнка #вакансия"), Some(WorkMode::Remote));
        assert_eq!(m("Формат: удаленка"), Some(WorkMode::Remote));
        assert_eq!(m("работа дистанционно"), Some(WorkMode::Remote));
        assert_eq!(m("Fully remote, async"), Some(WorkMode::Remote));
        assert_eq!(m("Работа в офисе на Таганке"), Some(WorkMode::OnSite));
        assert_eq!(m("On-site in Berlin"), Some(WorkMode::OnSite));
        assert_eq!(m("Гибрид: 2 дня в офисе"), Some(WorkMode::Hybrid));
        assert_eq!(m("Hybrid, London"), Some(WorkMode::Hybrid));
        assert_eq!(m("Офис в Москве или удалёнка"), Some(WorkMode::Hybrid));
        assert_eq!(m("Без офиса, всё удалённо"), Some(WorkMode::Remote));
        // Channel names and handles are not the job's work mode.
        assert_eq!(m("Forwarded from Remote IT Jobs\nНужен лендинг"), None);
        assert_eq!(m("Пишите @remote_jobs_admin"), None);
        assert_eq!(m("Нужен лендинг на Тильде"), None);
    }
}
