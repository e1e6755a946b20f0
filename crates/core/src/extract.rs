//! What a job says about itself: a one-line title, the budget, the deadline, where the work
//! is done, the main skills and how to reach the client.
//!
//! The types are shared by both classifiers (the LLM returns them in its JSON answer, the
//! local path fills them with [`extract`]), stored with the classification as JSON, shown on
//! the delivered card and read by personal filters (minimum budget).
//!
//! [`extract`] is rule-based and tuned for the vocabulary of Russian and English
//! freelance channels, not for any one channel: it never fails and never panics, whatever the
//! text (it reads at most [`MAX_INPUT_CHARS`] characters of it). Each field can also be read
//! on its own ([`extract_budget`], [`extract_deadline`], …).
//!
//! ## What counts as a budget
//!
//! An amount with a currency (`15 000 ₽`, `$500`, `500 usd`, `€1,200`, `3000 грн`, `50 000 тг`,
//! `100 USDT`, `500 звёзд`), or a bare amount right after a pay word (`Бюджет: 25 000`,
//! `зп 80к`), or — in Russian text — a bare `30к` / `8-10 тыс.` that no noun follows (`5к`, not
//! `180к подписчиков`). Ranges (`от X до Y`, `X–Y`, `20-30$/час`) keep both ends; a bound
//! alone (`до 50 тыс.`, `under $100`, `от 80к`) is recorded as that amount. A price per piece
//! of work (`700₽ за ролик`, `$25 each`) is a fixed budget of that amount; a rate per volume
//! of text or audio (`$0.05/word`, `120₽/1000 зн.`, `1500₽/10 мин`) and a weekly rate are not
//! budgets (the type cannot say "per word"), nor are ad spend, turnover and audience sizes.
//! `оплата договорная` and `бюджет обсуждается` state no budget. Without a currency the
//! amount is in roubles when the text is mostly Cyrillic, else in US dollars.

use std::fmt;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use serde::{Deserialize, Serialize};

/// Everything extracted from one job post. Every field may be unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Extraction {
    /// A one-line title (at most [`MAX_TITLE_CHARS`] characters).
    pub title: Option<String>,
    /// The budget; `None` when the post does not state one.
    pub budget: Option<Budget>,
    /// The deadline as stated ("до пятницы", "3 days", "2026-12-01").
    pub deadline: Option<String>,
    /// Remote, on-site or hybrid; `None` when not stated.
    pub work_mode: Option<WorkMode>,
    /// The main skills or tools asked for (at most [`MAX_SKILLS`]).
    pub skills: Vec<String>,
    /// How to reach the client: a `@username` or a link.
    pub contact: Option<String>,
}

/// The longest title kept, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// The most skills kept.
pub const MAX_SKILLS: usize = 8;

/// A stated budget: an amount or a range, in a currency, per job or per unit of time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The amount, or the lower end of a range.
    pub min: f64,
    /// The upper end of a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// ISO 4217 code (`RUB`, `USD`, `EUR`, `UAH`, `KZT`, …) or `USDT`/`XTR`.
    pub currency: String,
    /// Per job, per hour or per month.
    pub basis: BudgetBasis,
}

/// What a budget amount is paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetBasis {
    /// The whole job.
    Fixed,
    /// Per hour.
    Hourly,
    /// Per month (a salary).
    Monthly,
}

/// Where the work is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkMode {
    Remote,
    OnSite,
    Hybrid,
}

/// The most characters of a post that [`extract`] reads (Telegram posts have at most 4096).
pub const MAX_INPUT_CHARS: usize = 16_384;
/// The longest deadline phrase kept, in characters.
pub const MAX_DEADLINE_CHARS: usize = 60;

impl Extraction {
    /// Whether nothing at all was extracted.
    pub fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.budget.is_none()
            && self.deadline.is_none()
            && self.work_mode.is_none()
            && self.skills.is_empty()
            && self.contact.is_none()
    }
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

impl BudgetBasis {
    /// A short lowercase label: `fixed`, `hourly`, `monthly`.
    pub fn label(self) -> &'static str {
        match self {
            BudgetBasis::Fixed => "fixed",
            BudgetBasis::Hourly => "hourly",
            BudgetBasis::Monthly => "monthly",
        }
    }
}

/// Extracts every field from a post's text (as posted: emoji, hashtags, links and line breaks
/// kept). Never panics; unknown fields are `None` or empty.
pub fn extract(text: &str) -> Extraction {
    let text = prepare(text);
    Extraction {
        title: title_of(&text),
        budget: budget_of(&text),
        deadline: deadline_of(&text),
        work_mode: work_mode_of(&text),
        skills: skills_of(&text),
        contact: contact_of(&text),
    }
}

/// The title alone; see [`extract`].
pub fn extract_title(text: &str) -> Option<String> {
    title_of(&prepare(text))
}

/// The budget alone; see [`extract`] and the module docs for what counts.
pub fn extract_budget(text: &str) -> Option<Budget> {
    budget_of(&prepare(text))
}

/// The deadline alone: the short phrase that states it (`до пятницы`, `3 дня`, `within 2
/// weeks`, `срочно`), at most [`MAX_DEADLINE_CHARS`] characters.
pub fn extract_deadline(text: &str) -> Option<String> {
    deadline_of(&prepare(text))
}

/// The work mode alone; see [`extract`].
pub fn extract_work_mode(text: &str) -> Option<WorkMode> {
    work_mode_of(&prepare(text))
}

/// The skills alone: canonical names from [`SKILLS`], in order of first appearance, at most
/// [`MAX_SKILLS`].
pub fn extract_skills(text: &str) -> Vec<String> {
    skills_of(&prepare(text))
}

/// The contact alone: a `@username`, a `https://t.me/…` or `https://wa.me/…` link, or an
/// e-mail address. The first one that follows a contact word (`пишите`, `контакт`, `DM`,
/// `apply`, `→`, …) wins; otherwise the first one in the text.
pub fn extract_contact(text: &str) -> Option<String> {
    contact_of(&prepare(text))
}

/// Whether `got` is the same budget as `expected`: same currency and basis, and both ends
/// within 1% (a missing upper end must be missing in both).
pub fn budget_matches(expected: &Budget, got: &Budget) -> bool {
    let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * a.abs().max(b.abs());
    expected.currency.eq_ignore_ascii_case(&got.currency)
        && expected.basis == got.basis
        && close(expected.min, got.min)
        && match (expected.max, got.max) {
            (None, None) => true,
            (Some(a), Some(b)) => close(a, b),
            _ => false,
        }
}

// ---------------------------------------------------------------------------------------
// Currency conversion
// ---------------------------------------------------------------------------------------

impl Budget {
    /// The amount a minimum-budget filter compares: the upper end of a range, else the
    /// amount.
    pub fn top(&self) -> f64 {
        self.max.unwrap_or(self.min)
    }

    /// [`Budget::top`] converted to `currency` with `rates`; `None` when either currency has
    /// no rate.
    pub fn amount_in(&self, currency: &str, rates: &Rates) -> Option<f64> {
        rates.convert(self.top(), &self.currency, currency)
    }

    /// [`Budget::top`] in the rates' base currency; `None` when the currency has no rate.
    pub fn top_in_base(&self, rates: &Rates) -> Option<f64> {
        rates.to_base(self.top(), &self.currency)
    }
}

/// Approximate exchange rates for comparing budgets in different currencies: the value of
/// one unit of each currency in a common base currency.
///
/// [`Rates::default`] is a hard-coded, **approximate** table with the rouble as base (USD ≈
/// 90, EUR ≈ 98, GBP ≈ 114, UAH ≈ 2.2, KZT ≈ 0.18, USDT = USD, XTR — a Telegram Star — ≈ 1.3).
/// It is good enough to tell a 500-rouble job from a $500 one, not for accounting; the
/// daemon's configuration can replace it ([`Rates::from_pairs`]) or override single rates
/// ([`Rates::with_rate`]). Currency codes are compared case-insensitively.
#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    /// (upper-case code, value of one unit in the base currency), each code once.
    entries: Vec<(String, f64)>,
}

/// The default table: (code, value of one unit in roubles).
pub const DEFAULT_RATES: &[(&str, f64)] = &[
    ("RUB", 1.0),
    ("USD", 90.0),
    ("USDT", 90.0),
    ("EUR", 98.0),
    ("GBP", 114.0),
    ("UAH", 2.2),
    ("KZT", 0.18),
    ("XTR", 1.3),
];

/// A rate that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatesError {
    /// The currency code is not 2–10 ASCII letters.
    #[error("bad currency code {0:?}: expected 2-10 ASCII letters")]
    BadCode(String),
    /// The value is not a positive finite number.
    #[error("bad rate {value} for {code}: expected a positive finite number")]
    BadRate {
        /// The currency.
        code: String,
        /// The rejected value.
        value: f64,
    },
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            entries: DEFAULT_RATES
                .iter()
                .map(|&(code, value)| (code.to_owned(), value))
                .collect(),
        }
    }
}

impl Rates {
    /// No rates at all: nothing can be converted (every comparison is skipped).
    pub const fn empty() -> Rates {
        Rates {
            entries: Vec::new(),
        }
    }

    /// Rates from `(code, value of one unit in the base currency)` pairs, e.g. from the
    /// daemon's configuration. The base currency is whichever has value 1 (it need not be
    /// listed; a currency missing from the list simply cannot be converted). A code listed
    /// twice keeps its last value.
    pub fn from_pairs<S: AsRef<str>>(
        pairs: impl IntoIterator<Item = (S, f64)>,
    ) -> Result<Rates, RatesError> {
        pairs
            .into_iter()
            .try_fold(Rates::empty(), |rates, (code, value)| {
                rates.with_rate(code.as_ref(), value)
            })
    }

    /// These rates with `code` set to `value` (added or replaced).
    pub fn with_rate(mut self, code: &str, value: f64) -> Result<Rates, RatesError> {
        let code = code.trim();
        if !(2..=10).contains(&code.len()) || !code.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(RatesError::BadCode(code.to_owned()));
        }
        let code = code.to_ascii_uppercase();
        if !(value.is_finite() && value > 0.0) {
            return Err(RatesError::BadRate { code, value });
        }
        match self.entries.iter_mut().find(|(c, _)| *c == code) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((code, value)),
        }
        Ok(self)
    }

    /// The value of one unit of `currency` in the base currency.
    pub fn rate(&self, currency: &str) -> Option<f64> {
        let currency = currency.trim();
        self.entries
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(currency))
            .map(|&(_, v)| v)
    }

    /// `amount` of `currency` in the base currency.
    pub fn to_base(&self, amount: f64, currency: &str) -> Option<f64> {
        Some(amount * self.rate(currency)?)
    }

    /// `amount` of `from` in `to`.
    pub fn convert(&self, amount: f64, from: &str, to: &str) -> Option<f64> {
        if from.trim().eq_ignore_ascii_case(to.trim()) {
            return Some(amount);
        }
        Some(self.to_base(amount, from)? / self.rate(to)?)
    }

    /// The `(code, value)` pairs, in insertion order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, f64)> {
        self.entries.iter().map(|(c, v)| (c.as_str(), *v))
    }
}

impl fmt::Display for Budget {
    /// `15 000–20 000 ₽`, `$35–50`, `500 USDT` (no basis).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let amount = match self.max {
            Some(max) if max != self.min => {
                format!("{}–{}", format_amount(self.min), format_amount(max))
            }
            _ => format_amount(self.min),
        };
        let code = self.currency.trim().to_ascii_uppercase();
        match code.as_str() {
            "USD" => write!(f, "${amount}"),
            "EUR" => write!(f, "€{amount}"),
            "GBP" => write!(f, "£{amount}"),
            "RUB" => write!(f, "{amount} ₽"),
            "UAH" => write!(f, "{amount} ₴"),
            "KZT" => write!(f, "{amount} ₸"),
            "XTR" => write!(f, "{amount} ⭐"),
            _ => write!(f, "{amount} {code}"),
        }
    }
}

/// `15000` → `15 000`, `1200.5` → `1 200.50`, `0.05` → `0.05`.
fn format_amount(value: f64) -> String {
    if !value.is_finite() {
        return "?".to_owned();
    }
    let rounded = (value * 100.0).round() / 100.0;
    let whole = rounded.trunc().abs();
    let cents = ((rounded.abs() - whole) * 100.0).round() as u64;
    let digits = format!("{whole:.0}");
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 && digits.len() > 4 {
            grouped.push(' ');
        }
        grouped.push(c);
    }
    if rounded < 0.0 {
        grouped.insert(0, '-');
    }
    if cents > 0 {
        grouped.push_str(&format!(".{cents:02}"));
    }
    grouped
}

// ---------------------------------------------------------------------------------------
// Preparation
// ---------------------------------------------------------------------------------------

/// At most [`MAX_INPUT_CHARS`] characters, line endings unified, exotic spaces as plain
/// spaces, HTML entities of feed items decoded.
fn prepare(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_INPUT_CHARS * 4));
    let mut prev_cr = false;
    for c in text.chars().take(MAX_INPUT_CHARS) {
        match c {
            '\r' => out.push('\n'),
            '\n' if prev_cr => {}
            '\u{a0}' | '\u{202f}' | '\u{2007}' | '\u{2009}' | '\u{200a}' | '\t' => out.push(' '),
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
        prev_cr = c == '\r';
    }
    if out.contains('&') {
        for (entity, plain) in [
            ("&amp;", "&"),
            ("&lt;", "<"),
            ("&gt;", ">"),
            ("&quot;", "\""),
            ("&#39;", "'"),
            ("&#x27;", "'"),
            ("&nbsp;", " "),
        ] {
            out = out.replace(entity, plain);
        }
    }
    out
}

/// The single-character lowercase of `c` (`c` itself when lowercasing makes more than one
/// character), so that positions in the lowercased text match the original's.
fn lower(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

fn is_cyrillic(c: char) -> bool {
    ('\u{0400}'..='\u{04FF}').contains(&c)
}

/// Whether most letters are Cyrillic.
fn mostly_cyrillic(chars: &[char]) -> bool {
    let (mut cyr, mut lat) = (0usize, 0usize);
    for &c in chars {
        if is_cyrillic(c) {
            cyr += 1;
        } else if c.is_ascii_alphabetic() {
            lat += 1;
        }
    }
    cyr > lat
}

fn regex(pattern: &str) -> Regex {
    // The patterns are constants of this module; the tests compile every one of them.
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("a valid built-in pattern")
}

// ---------------------------------------------------------------------------------------
// Budget
// ---------------------------------------------------------------------------------------

/// One side of an amount: the number, its multiplier and a currency written after it.
#[derive(Debug, Clone, Copy)]
struct Side {
    value: f64,
    mult: Option<f64>,
    currency: Option<&'static str>,
    end: usize,
}

/// An amount or range found in the text, before deciding whether it is a budget.
#[derive(Debug, Clone)]
struct Candidate {
    start: usize,
    end: usize,
    min: f64,
    max: Option<f64>,
    currency: Option<&'static str>,
    has_mult: bool,
}

/// Currency words written after an amount: (lowercase token, code, whether more letters
/// may follow, as in `руб` → `рублей`). Longer tokens first where one is a prefix of another.
const CURRENCY_AFTER: &[(&str, &str, bool)] = &[
    ("₽", "RUB", false),
    ("руб", "RUB", true),
    ("р.", "RUB", false),
    ("р", "RUB", false),
    ("rub", "RUB", true),
    ("rur", "RUB", false),
    ("$", "USD", false),
    ("usdt", "USDT", false),
    ("usdc", "USDT", false),
    ("usd", "USD", false),
    ("долл", "USD", true),
    ("бакс", "USD", true),
    ("dollar", "USD", true),
    ("€", "EUR", false),
    ("eur", "EUR", true),
    ("евро", "EUR", false),
    ("£", "GBP", false),
    ("gbp", "GBP", false),
    ("грн", "UAH", true),
    ("гривн", "UAH", true),
    ("гривен", "UAH", false),
    ("uah", "UAH", false),
    ("₴", "UAH", false),
    ("тенге", "KZT", false),
    ("тг", "KZT", false),
    ("kzt", "KZT", false),
    ("₸", "KZT", false),
    ("stars", "XTR", false),
    ("star", "XTR", false),
    ("звезд", "XTR", true),
    ("звёзд", "XTR", true),
    ("xtr", "XTR", false),
    ("⭐", "XTR", false),
];

/// Currency marks written before an amount.
const CURRENCY_BEFORE: &[(&str, &str)] = &[
    ("us$", "USD"),
    ("$", "USD"),
    ("€", "EUR"),
    ("£", "GBP"),
    ("₽", "RUB"),
    ("₴", "UAH"),
    ("₸", "KZT"),
    ("usdt", "USDT"),
    ("usd", "USD"),
    ("eur", "EUR"),
    ("rub", "RUB"),
];

/// Words that may follow a bare amount that is still money (`Бюджет 5000 за всё`).
const AFTER_BARE_OK: &[&str] = &[
    "за",
    "в",
    "на",
    "и",
    "или",
    "per",
    "for",
    "fixed",
    "total",
    "all",
    "each",
    "or",
    "and",
    "a",
    "an",
    "net",
    "gross",
    "+",
    "до",
    "to",
    "фикс",
    "всего",
    "нетто",
];

static PAY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:бюджет|оплат|оплач|плачу|платим|заплат|\bзп\b|з/п|зарплат|оклад|гонорар|стоимост|\bцена|ценник|ставк|вознагражд|ориентир|\bдоход|\bpay|budget|\brate\b|salary|\bprice|compensation|\bfee\b|\bфикс\b|💰|💵|💸)[^\d\n]{0,24}$",
    )
});
static NOT_PAY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:оборот|выручк|revenue|turnover|ad spend|ads? budget|рекламн\w* бюджет|бюджет\w* на рекламу|на рекламу|инвестиц|raised|тестов\w*|test task|paid test|средний чек|average (?:order|check))",
    )
});
static NOT_PAY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:(?:/|per\b|an?\b|в\b|за\b)\s*(?:month|mo|мес\w*|hour|hr|h|час|week|нед\w*)\b\.?)?\W{0,3}(?:ad spend|spend|на рекламу|рекламн|оборот|выручк|revenue|turnover|подписчик|followers|subs\b|subscribers|просмотр|views|mrr|arr\b|gmv|слов|words?\b|знак|символ|chars?\b|users|пользовател|участник|members)",
    )
});
static PER_VOLUME_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:/|за\b|per\b|an?\b|за каждые|for every|for each)\s*(?:\d[\d ]*|тыс\.?|k\b|к\b)?\s*(?:зн|знак|символ|сим\b|слов|word|char|мин|min|стр\b|страниц|page|лист|строк|line)",
    )
});
static WEEKLY_AFTER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)^\s*(?:/|per\b|в\b|за\b|an?\b)\s*(?:нед|week|wk\b)|^\s*weekly"));
static HOURLY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:(?:/|per\b|в\b|за\b|an?\b|p/)\s*(?:1\s*)?(?:час|ч\b|h\b|hrs?\b|hour)|hourly|ph\b)",
    )
});
static MONTHLY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^\s*(?:(?:/|per\b|в\b|за\b|an?\b)\s*(?:мес|month|mo\b|mth)|monthly|ежемесячно)")
});
static HOURLY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(?:почасов|hourly|в час\b|per hour|ставка за час)[^\d\n.,;]{0,15}$")
});
static MONTHLY_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:\bзп\b|з/п|зарплат|оклад|salary|monthly|ежемесячн|в месяц|per month)[^\d\n.,;]{0,15}$",
    )
});

/// Whether `lc[at..]` starts with `token` (lowercase).
fn starts_with(lc: &[char], at: usize, token: &str) -> bool {
    (at..)
        .zip(token.chars())
        .all(|(i, t)| lc.get(i) == Some(&t))
}

fn is_letter(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphabetic())
}

fn skip_spaces(lc: &[char], mut at: usize, max: usize) -> usize {
    let mut n = 0;
    while n < max && lc.get(at) == Some(&' ') {
        at += 1;
        n += 1;
    }
    at
}

/// A number at `lc[at]` (a digit): `15000`, `15 000`, `1,200`, `1.200,50`, `2.5`, `0,05`.
/// Returns its value and where it ends.
fn number(lc: &[char], at: usize) -> Option<(f64, usize)> {
    let digit = |i: usize| lc.get(i).is_some_and(|c| c.is_ascii_digit());
    let mut i = at;
    let mut int = String::new();
    while digit(i) {
        int.push(lc[i]);
        i += 1;
    }
    if int.is_empty() || int.len() > 12 {
        return None;
    }
    // Thousands groups: a separator followed by exactly three digits.
    let mut group_sep = None;
    if int.len() <= 3 && !int.starts_with('0') {
        while let Some(&sep) = lc.get(i) {
            let ok = matches!(sep, ' ' | ',' | '.')
                && group_sep.is_none_or(|g| g == sep)
                && (1..=3).all(|k| digit(i + k))
                && !digit(i + 4);
            if !ok {
                break;
            }
            group_sep = Some(sep);
            int.extend(&lc[i + 1..i + 4]);
            i += 4;
        }
    }
    let mut value: f64 = int.parse().ok()?;
    // Decimals: one or two digits after a separator that is not the group separator.
    if let Some(&sep) = lc.get(i)
        && matches!(sep, ',' | '.')
        && group_sep != Some(sep)
        && digit(i + 1)
    {
        let mut j = i + 1;
        let mut frac = String::from("0.");
        while digit(j) {
            frac.push(lc[j]);
            j += 1;
        }
        if j - i - 1 <= 2 {
            value += frac.parse::<f64>().ok()?;
            i = j;
        }
    }
    Some((value, i))
}

/// A multiplier right after a number: `к`/`k` (glued), `тыс.`, `тысяч`, `thousand`, `млн`.
fn multiplier(lc: &[char], at: usize) -> Option<(f64, usize)> {
    if matches!(lc.get(at), Some('k' | 'к')) && !is_letter(lc.get(at + 1)) {
        return Some((1e3, at + 1));
    }
    let at = skip_spaces(lc, at, 1);
    for (token, mult) in [
        ("тыс", 1e3),
        ("тыщ", 1e3),
        ("thousand", 1e3),
        ("млн", 1e6),
        ("mln", 1e6),
        ("million", 1e6),
    ] {
        if starts_with(lc, at, token) {
            let mut end = at + token.chars().count();
            while is_letter(lc.get(end)) {
                end += 1;
            }
            if lc.get(end) == Some(&'.') {
                end += 1;
            }
            return Some((mult, end));
        }
    }
    None
}

/// A currency written right after an amount.
fn currency_after(lc: &[char], at: usize) -> Option<(&'static str, usize)> {
    let at = skip_spaces(lc, at, 1);
    for &(token, code, stem) in CURRENCY_AFTER {
        if !starts_with(lc, at, token) {
            continue;
        }
        let mut end = at + token.chars().count();
        let last_is_letter = token.chars().last().is_some_and(char::is_alphabetic);
        if stem {
            while is_letter(lc.get(end)) {
                end += 1;
            }
            if lc.get(end) == Some(&'.') {
                end += 1;
            }
        } else if last_is_letter && is_letter(lc.get(end)) {
            continue;
        }
        // `3 тг-бота`: a word with a hyphenated tail, not a currency.
        if last_is_letter && lc.get(end) == Some(&'-') && is_letter(lc.get(end + 1)) {
            continue;
        }
        if code == "XTR" && lc.get(end) == Some(&'\u{fe0f}') {
            end += 1;
        }
        return Some((code, end));
    }
    None
}

/// A currency written right before the amount starting at `at`.
fn currency_before(lc: &[char], at: usize) -> Option<(&'static str, usize)> {
    let mut end = at;
    if end > 0 && lc[end - 1] == ' ' {
        end -= 1;
    }
    for &(token, code) in CURRENCY_BEFORE {
        let len = token.chars().count();
        if end < len || !starts_with(lc, end - len, token) {
            continue;
        }
        let start = end - len;
        let first_is_letter = token.chars().next().is_some_and(char::is_alphabetic);
        if first_is_letter && start > 0 && lc[start - 1].is_alphanumeric() {
            continue;
        }
        return Some((code, start));
    }
    None
}

/// One side of an amount starting at the digit `lc[at]`.
fn side(lc: &[char], at: usize) -> Option<Side> {
    let (value, mut end) = number(lc, at)?;
    let mult = multiplier(lc, end).map(|(m, e)| {
        end = e;
        m
    });
    let currency = currency_after(lc, end).map(|(c, e)| {
        end = e;
        c
    });
    // A number glued to letters that are neither a multiplier nor a currency (`20h`, `3d`,
    // `9am`) is not an amount.
    if mult.is_none() && currency.is_none() && is_letter(lc.get(end)) {
        return None;
    }
    Some(Side {
        value,
        mult,
        currency,
        end,
    })
}

/// The amount or range starting at the digit `lc[at]`.
fn candidate(lc: &[char], at: usize) -> Option<Candidate> {
    let a = side(lc, at)?;
    let before = currency_before(lc, at);
    let mut cand = Candidate {
        start: before.map_or(at, |(_, s)| s),
        end: a.end,
        min: a.value * a.mult.unwrap_or(1.0),
        max: None,
        currency: a.currency.or(before.map(|(c, _)| c)),
        has_mult: a.mult.is_some(),
    };
    // A range: `X-Y`, `X – Y`, `X до Y`, `X to Y`, with the currency on either end.
    let mut p = skip_spaces(lc, a.end, 2);
    let dash = matches!(lc.get(p), Some('-' | '–' | '—' | '−'));
    let word = ["до ", "to "].iter().find(|w| starts_with(lc, p, w));
    if dash {
        p += 1;
    } else if let Some(w) = word {
        p += w.chars().count();
    } else {
        return Some(cand);
    }
    p = skip_spaces(lc, p, 2);
    let mut b_currency = None;
    if let Some(&(token, code)) = CURRENCY_BEFORE
        .iter()
        .find(|(t, _)| !t.starts_with(char::is_alphabetic) && starts_with(lc, p, t))
    {
        b_currency = Some(code);
        p = skip_spaces(lc, p + token.chars().count(), 1);
    }
    if !lc.get(p).is_some_and(|c| c.is_ascii_digit()) {
        return Some(cand);
    }
    let Some(b) = side(lc, p) else {
        return Some(cand);
    };
    let mut low = a.value * a.mult.unwrap_or(1.0);
    let mut high = b.value * b.mult.unwrap_or(1.0);
    if a.mult.is_none() && b.mult.is_some() && a.value < b.value {
        low = a.value * b.mult.unwrap_or(1.0);
    }
    if dash && b.mult.is_none() && a.mult.is_some() && b.value > a.value {
        high = b.value * a.mult.unwrap_or(1.0);
    }
    if high <= low {
        return Some(cand);
    }
    cand.min = low;
    cand.max = Some(high);
    cand.end = b.end;
    cand.currency = cand.currency.or(b.currency).or(b_currency);
    cand.has_mult |= b.mult.is_some();
    Some(cand)
}

/// `lc[from..to]` as a string.
fn slice(lc: &[char], from: usize, to: usize) -> String {
    lc[from.min(lc.len())..to.min(lc.len())].iter().collect()
}

/// The same line's text before `at`, at most `max` characters.
fn line_before(lc: &[char], at: usize, max: usize) -> String {
    let mut from = at;
    while from > 0 && at - from < max && lc[from - 1] != '\n' {
        from -= 1;
    }
    slice(lc, from, at)
}

/// The same line's text after `at`, at most `max` characters.
fn line_after(lc: &[char], at: usize, max: usize) -> String {
    let mut to = at;
    while to < lc.len() && to - at < max && lc[to] != '\n' {
        to += 1;
    }
    slice(lc, at, to)
}

/// Whether what follows a bare amount (no currency) still allows it to be money: the end,
/// punctuation or a slash, or one of [`AFTER_BARE_OK`] — not a noun (`3 концепта`, `180к
/// подписчиков`) and not a percentage or a time.
fn bare_amount_ends_well(lc: &[char], end: usize) -> bool {
    let p = skip_spaces(lc, end, 3);
    match lc.get(p) {
        None => true,
        Some('%' | ':' | '°' | '×' | 'x') => false,
        Some('-') if is_letter(lc.get(p + 1)) => false,
        Some(c) if c.is_ascii_digit() => false,
        Some(c) if c.is_alphabetic() => {
            let mut q = p;
            while is_letter(lc.get(q)) {
                q += 1;
            }
            let word = slice(lc, p, q);
            AFTER_BARE_OK.contains(&word.as_str())
        }
        Some(_) => true,
    }
}

fn budget_of(text: &str) -> Option<Budget> {
    let chars: Vec<char> = text.chars().collect();
    let lc: Vec<char> = chars.iter().map(|&c| lower(c)).collect();
    let cyrillic = mostly_cyrillic(&chars);

    // (score, candidate, basis, context before)
    let mut found: Vec<(u8, Candidate, BudgetBasis, String)> = Vec::new();
    let mut i = 0;
    while i < lc.len() {
        if !lc[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let glued = i > 0
            && (lc[i - 1].is_alphanumeric()
                || matches!(lc[i - 1], '_' | '+' | '#' | '№' | '/' | '.' | ','));
        let cand = if glued { None } else { candidate(&lc, i) };
        let Some(cand) = cand else {
            while i < lc.len() && lc[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        };
        i = cand.end.max(i + 1);
        if let Some(scored) = judge(&lc, cyrillic, cand) {
            found.push(scored);
        }
    }

    let best = found
        .iter()
        .enumerate()
        .max_by(|(ia, a), (ib, b)| a.0.cmp(&b.0).then(ib.cmp(ia)))
        .map(|(i, _)| i)?;
    let (_, cand, basis, before) = &found[best];
    let currency = cand
        .currency
        .unwrap_or(if cyrillic { "RUB" } else { "USD" });
    let mut budget = Budget {
        min: cand.min,
        max: cand.max,
        currency: currency.to_owned(),
        basis: *basis,
    };
    // Exchanges' "desired budget: up to X / acceptable: up to Y" is the range X–Y.
    if budget.max.is_none() && (before.contains("желаем") || before.contains("desired")) {
        let upper = found[best + 1..].iter().find(|(_, c, b, ctx)| {
            (ctx.contains("допустим") || ctx.contains("max"))
                && c.currency.unwrap_or(currency) == currency
                && *b == budget.basis
                && c.max.is_none()
                && c.min > budget.min
        });
        if let Some((_, upper, _, _)) = upper {
            budget.max = Some(upper.min);
        }
    }
    Some(budget)
}

/// Decides whether a candidate amount is a budget and how strongly: 2 points for a
/// currency, 3 for a pay word before it on its line, 1 for a bare `30к` in Russian text.
fn judge(
    lc: &[char],
    cyrillic: bool,
    cand: Candidate,
) -> Option<(u8, Candidate, BudgetBasis, String)> {
    if !(cand.min.is_finite() && cand.min > 0.0 && cand.min < 1e12) {
        return None;
    }
    let before = line_before(lc, cand.start, 40);
    // The clause right before the amount: `ad spend. $2,000` is not about ad spend.
    let near_before = {
        let near = line_before(lc, cand.start, 30);
        match near.rfind(['.', '!', '?', ';']) {
            Some(at) => near[at + 1..].to_owned(),
            None => near,
        }
    };
    let after = line_after(lc, cand.end, 30);
    if NOT_PAY_AFTER.is_match(&after)
        || NOT_PAY_BEFORE.is_match(&near_before)
        || PER_VOLUME_AFTER.is_match(&after)
        || WEEKLY_AFTER.is_match(&after)
    {
        return None;
    }
    let pay_word = PAY_WORD.is_match(&before);
    let mut score = 0;
    if cand.currency.is_some() {
        score += 2;
    }
    if pay_word {
        score += 3;
    }
    // `Бюджет 5к пишите в лс` is money; `Оплата 2 раза в месяц` and `180к подписчиков` are not.
    if cand.currency.is_none() {
        if !(bare_amount_ends_well(lc, cand.end) || (pay_word && cand.has_mult)) {
            return None;
        }
        if !pay_word {
            if !(cyrillic && cand.has_mult) {
                return None;
            }
            score += 1;
        }
    }
    let basis = if HOURLY_AFTER.is_match(&after) {
        BudgetBasis::Hourly
    } else if MONTHLY_AFTER.is_match(&after) {
        BudgetBasis::Monthly
    } else if HOURLY_BEFORE.is_match(&before) {
        BudgetBasis::Hourly
    } else if MONTHLY_BEFORE.is_match(&before) {
        BudgetBasis::Monthly
    } else {
        BudgetBasis::Fixed
    };
    Some((score, cand, basis, before))
}

// ---------------------------------------------------------------------------------------
// Deadline
// ---------------------------------------------------------------------------------------

/// `Срок: 3 дня`, `дедлайн 10 декабря`, `Deadline: Friday`, `сдача в течение 48ч`.
static DEADLINE_LABELED: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:\bсрок(?:и|а|ов)?(?:\s+(?:выполнения|сдачи|исполнения|работы|реализации))?|\bдедлайн|\bdeadline|\bdue(?:\s+date)?|\btimeline|\bturnaround|\bсдача)\b\s*(?:[:\-–—]\s*)?(?P<v>[^\n.;!?,]{1,80})",
    )
});
/// The value of a labeled deadline must say something about time.
static TIME_HINT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\d|сегодня|завтра|недел|месяц|\bдн[яеи]|день|сут|\bчас|понедельник|вторник|\bсред[уыа]\b|четверг|пятниц|суббот|воскресень|январ|феврал|\bмарт|апрел|\bма[йя]\b|\bиюн|\bиюл|август|сентябр|октябр|ноябр|декабр|\bконц|срочн|горит|горят|asap|urgent|today|tomorrow|tonight|week|month|\bdays?\b|hour|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|\bmay\b|june|july|august|september|october|november|december|end of|\beod\b|\beow\b",
    )
});
/// A labeled value that denies a deadline: `сроки не горят`, `deadline flexible`.
static NO_DEADLINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:не\b|нет\b|no\b|not\b|none|flexible|гибк|обсужда|любы|открыт|tbd|negotiable|свобод|на ваше|by agreement|по договор)",
    )
});
const MONTHS_RU: &str =
    r"(?:январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр)\w*";
const MONTHS_EN: &str = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?";
const WEEKDAYS: &str = r"(?:понедельник\w*|вторник\w*|сред[уыа]|четверг\w*|пятниц\w*|суббот\w*|воскресень\w*|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri)";
/// `до пятницы`, `к 10 декабря`, `by Friday`, `до конца недели`, `до 15.12`.
static DEADLINE_BY: LazyLock<Regex> = LazyLock::new(|| {
    regex(&format!(
        r"(?i)\b(?:до|к|by|until|till|before|не позднее|no later than)\s+(?:(?:конц\w*|end\s+of(?:\s+the)?)\s+\w+|(?:this|next|этой|следующей|следующего|ближайш\w*)?\s*{WEEKDAYS}\b|завтра\w*|послезавтра|вечера|утра|утру|обеда|выходных|tomorrow|tonight|eod|eow|\d{{1,2}}(?:-?го)?\s+{MONTHS_RU}|\d{{1,2}}\.\d{{2}}(?:\.\d{{2,4}})?|{MONTHS_EN}\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTHS_EN}|\d{{1,2}}(?:-?го)?\s+числа)"
    ))
});
/// `within 2 weeks`, `в течение 48ч`, `за 3 дня`, `in 10 days`.
static DEADLINE_WITHIN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:(?:(?:within|в течение|в течении)\s+(?:\d+(?:[.,]\d+)?(?:\s*[-–]\s*\d+)?\s*|одн\w+\s+|пар[ыу]\s+|an?\s+|one\s+|two\s+|a couple of\s+)?|(?:in|не более|не дольше|no more than)\s+(?:\d+(?:[.,]\d+)?(?:\s*[-–]\s*\d+)?\s*|одн\w+\s+|пар[ыу]\s+|a couple of\s+|one\s+|two\s+))(?:час(?:а|ов)?|ч|h|hrs?|hours?|дн(?:я|ей)|день|сут(?:ки|ок)|недел[иьюя]|weeks?|days?|месяц(?:а|ев)?|months?)|за\s+(?:\d+(?:\s*[-–]\s*\d+)?\s*|одн\w+\s+|пар[ыу]\s+)(?:дн(?:я|ей)|день|сут(?:ки|ок)|недел[иьюя]))\b",
    )
});
/// `this week`, `на этой неделе`.
static DEADLINE_THIS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:this week(?:end)?|на этой неделе|на этих выходных|в течение дня|end of (?:the )?(?:day|week))\b",
    )
});
/// Time phrases about something other than the delivery: starting, answering, paying.
static NOT_DUE_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:start|begin|onboard|reply|respond|answer|get back|hear back|paid|pay|начать|начало|приступ|старт|ответ|отвеча|свяж|связыв|оплат|выплат|напомина|reminder)\W*(?:\w+\W+){0,3}$",
    )
});
/// A labeled timeline that is about starting, not finishing (`Timeline: start within 2 weeks`).
static NOT_DUE_VALUE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b(?:start|begin|начать|начало|приступ|старт)"));
/// `срочно`, `ASAP`, `нужно сегодня`.
static DEADLINE_URGENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:срочн\w*|asap|urgent\w*|as soon as possible|сегодня|today|tonight|горит|на завтра)\b",
    )
});

fn deadline_of(text: &str) -> Option<String> {
    for m in DEADLINE_LABELED.captures_iter(text) {
        let Some(v) = m.name("v") else { continue };
        let value = v
            .as_str()
            .trim()
            .trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | '"' | '«' | '»'))
            .trim();
        if value.is_empty()
            || NO_DEADLINE.is_match(value)
            || !TIME_HINT.is_match(value)
            || NOT_DUE_VALUE.is_match(value)
        {
            continue;
        }
        return Some(short_phrase(value, MAX_DEADLINE_CHARS));
    }
    for pattern in [
        &DEADLINE_BY,
        &DEADLINE_WITHIN,
        &DEADLINE_THIS,
        &DEADLINE_URGENT,
    ] {
        for m in pattern.find_iter(text) {
            // `до 15.12` must not be the start of `до 15.123`.
            if text[m.end()..].starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            // `start within 2 weeks`, `ответим в течение недели`: not when the work is due.
            let before: String = {
                let rev: Vec<char> = text[..m.start()].chars().rev().take(30).collect();
                rev.into_iter().rev().collect()
            };
            if NOT_DUE_BEFORE.is_match(&before) {
                continue;
            }
            return Some(short_phrase(m.as_str().trim(), MAX_DEADLINE_CHARS));
        }
    }
    None
}

/// One line, collapsed whitespace, at most `max` characters (cut between words, ending
/// with `…`).
fn short_phrase(raw: &str, max: usize) -> String {
    let joined = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let joined = joined.trim_end_matches([':', '-', '–', '—', ',']);
    if joined.chars().count() <= max {
        return joined.to_owned();
    }
    let chars: Vec<char> = joined.chars().collect();
    let limit = max.saturating_sub(1);
    let cut = (limit / 2..=limit)
        .rev()
        .find(|&i| chars.get(i) == Some(&' '))
        .unwrap_or(limit);
    let mut out: String = chars[..cut].iter().collect();
    out.truncate(
        out.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | ';' | ':'))
            .len(),
    );
    out.push('…');
    out
}

// ---------------------------------------------------------------------------------------
// Work mode
// ---------------------------------------------------------------------------------------

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

fn work_mode_of(text: &str) -> Option<WorkMode> {
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

fn is_forward_header(line: &str) -> bool {
    let l = line.trim_start().to_lowercase();
    [
        "forwarded from",
        "переслано от",
        "переслано из",
        "репост из",
        "repost from",
    ]
    .iter()
    .any(|p| l.starts_with(p))
}

// ---------------------------------------------------------------------------------------
// Contact
// ---------------------------------------------------------------------------------------

static HANDLE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?:^|[^\w@./])@([A-Za-z][A-Za-z0-9_]{4,31})"));
static TG_LINK: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(?:https?://)?(?:www\.)?(?:t|telegram)\.me/([A-Za-z][A-Za-z0-9_]{4,31})")
});
static WA_LINK: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)(?:https?://)?wa\.me/(\+?\d{6,15})"));
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:^|[^\w.+-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24})",
    )
});
static CONTACT_CUE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:пиш|писать|напиш|контакт|связ|\bлс\b|л/с|личк|в личн|отклик|резюме|присыл|кидай|скидыв|обращ|заявк|\bdm\b|\bpm\b|contact|apply|reach|message|send|write|\btg\b|telegram:|→|👉|📩|✉|➡|📞|☎)",
    )
});
static VIA_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)(?:via|forwarded from|переслано от|from)\s*$"));

fn contact_of(text: &str) -> Option<String> {
    // (position, contact)
    let mut found: Vec<(usize, String)> = Vec::new();
    for c in HANDLE.captures_iter(text) {
        let Some(name) = c.get(1) else { continue };
        let after = text[name.end()..].chars().next();
        if after.is_some_and(|a| a.is_ascii_alphanumeric() || a == '_' || a == '@') {
            continue;
        }
        let at = name.start() - 1;
        if VIA_BEFORE.is_match(&text[..at]) {
            continue;
        }
        found.push((at, format!("@{}", name.as_str())));
    }
    for c in TG_LINK.captures_iter(text) {
        let (Some(whole), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let rest = &text[name.end()..];
        // A post link (`t.me/channel/42`) or an over-long name is not a contact.
        if rest.starts_with(|a: char| a.is_ascii_alphanumeric() || a == '_')
            || rest
                .strip_prefix('/')
                .is_some_and(|r| r.starts_with(|a: char| a.is_ascii_digit()))
            || ["joinchat", "addstickers", "share"]
                .contains(&name.as_str().to_ascii_lowercase().as_str())
        {
            continue;
        }
        found.push((whole.start(), format!("https://t.me/{}", name.as_str())));
    }
    for c in WA_LINK.captures_iter(text) {
        let (Some(whole), Some(number)) = (c.get(0), c.get(1)) else {
            continue;
        };
        found.push((whole.start(), format!("https://wa.me/{}", number.as_str())));
    }
    for c in EMAIL.captures_iter(text) {
        let Some(address) = c.get(1) else { continue };
        found.push((address.start(), address.as_str().to_owned()));
    }
    found.sort_by_key(|(at, _)| *at);
    let cued = found.iter().find(|(at, _)| {
        let before: String = {
            let head = &text[..*at];
            let chars: Vec<char> = head.chars().rev().take(60).collect();
            chars.into_iter().rev().collect()
        };
        CONTACT_CUE.is_match(&before)
    });
    cued.or(found.first()).map(|(_, c)| c.clone())
}

// ---------------------------------------------------------------------------------------
// Skills
// ---------------------------------------------------------------------------------------

/// The skills and tools [`extract`] recognizes: (display name, spellings). Spellings are
/// lowercase with `е` for `ё`, matched case-insensitively on word boundaries; a trailing `*`
/// lets a Russian stem take any ending (`фигм*` finds `фигме`, `фигму`). Ambiguous words
/// (`go`, `sketch`, `express`, `директ`) are left out or only matched in unambiguous forms.
pub const SKILLS: &[(&str, &[&str])] = &[
    // Design
    ("Figma", &["figma", "фигм*"]),
    ("Photoshop", &["photoshop", "adobe photoshop", "фотошоп*"]),
    ("Illustrator", &["adobe illustrator", "иллюстратор adobe"]),
    ("InDesign", &["indesign", "индизайн*"]),
    ("Adobe XD", &["adobe xd"]),
    ("Framer", &["framer"]),
    ("Spline", &["spline"]),
    ("CorelDRAW", &["coreldraw", "corel draw", "корел*"]),
    ("Canva", &["canva", "канв*"]),
    ("Lightroom", &["lightroom", "лайтрум*"]),
    ("Procreate", &["procreate"]),
    ("Blender", &["blender", "блендер*"]),
    ("Cinema 4D", &["cinema 4d", "c4d"]),
    ("3ds Max", &["3ds max", "3dsmax", "3d max", "3д макс"]),
    ("ZBrush", &["zbrush"]),
    ("AutoCAD", &["autocad", "автокад*"]),
    ("Revit", &["revit", "ревит*"]),
    ("ArchiCAD", &["archicad", "архикад*"]),
    ("SketchUp", &["sketchup"]),
    ("UI/UX", &["ui/ux", "ux/ui", "ui-ux", "ux-ui", "ui ux"]),
    // Video and audio
    (
        "After Effects",
        &["after effects", "aftereffects", "афтер эффект*", "афтер*"],
    ),
    (
        "Premiere Pro",
        &["premiere pro", "adobe premiere", "premiere", "премьер про"],
    ),
    (
        "DaVinci Resolve",
        &[
            "davinci resolve",
            "davinci",
            "da vinci resolve",
            "давинчи*",
            "да винчи",
        ],
    ),
    ("Final Cut", &["final cut", "final cut pro", "файнал кат"]),
    ("CapCut", &["capcut", "кап кат", "капкут*"]),
    ("Adobe Audition", &["adobe audition"]),
    ("Ableton", &["ableton", "эблтон*"]),
    ("FL Studio", &["fl studio", "фл студи*"]),
    ("Logic Pro", &["logic pro"]),
    ("Pro Tools", &["pro tools", "protools"]),
    ("Cubase", &["cubase", "кубейс*"]),
    ("Reaper", &["reaper"]),
    ("iZotope", &["izotope", "izotope rx"]),
    // AI
    (
        "ChatGPT",
        &[
            "chatgpt",
            "chat gpt",
            "чатгпт",
            "чат gpt",
            "чат-гпт",
            "чат гпт",
            "gpt",
        ],
    ),
    ("OpenAI API", &["openai", "open ai"]),
    ("Claude", &["claude"]),
    (
        "Midjourney",
        &["midjourney", "миджорни", "мидджорни", "миджерни"],
    ),
    (
        "Stable Diffusion",
        &["stable diffusion", "стейбл диффуж*", "sdxl"],
    ),
    ("ComfyUI", &["comfyui", "comfy ui"]),
    ("DALL-E", &["dall-e", "dalle"]),
    ("Runway", &["runway"]),
    ("Kling", &["kling"]),
    ("Sora", &["sora"]),
    ("HeyGen", &["heygen"]),
    ("Synthesia", &["synthesia"]),
    ("ElevenLabs", &["elevenlabs", "eleven labs"]),
    ("Suno", &["suno"]),
    ("LangChain", &["langchain"]),
    ("PyTorch", &["pytorch"]),
    ("TensorFlow", &["tensorflow"]),
    ("YOLO", &["yolo*"]),
    ("OpenCV", &["opencv"]),
    ("LlamaIndex", &["llamaindex", "llama index"]),
    ("Hugging Face", &["hugging face", "huggingface"]),
    ("vLLM", &["vllm"]),
    // Web and site builders
    (
        "WordPress",
        &["wordpress", "wp", "вордпресс*", "вордпрес*", "word press"],
    ),
    ("WooCommerce", &["woocommerce"]),
    ("Elementor", &["elementor"]),
    ("Tilda", &["tilda", "тильд*"]),
    ("Wix", &["wix", "викс*"]),
    ("Webflow", &["webflow", "вебфлоу"]),
    ("Shopify", &["shopify", "шопифай*"]),
    (
        "Bitrix",
        &[
            "bitrix",
            "1c-bitrix",
            "1с-битрикс",
            "1с битрикс",
            "1c битрикс",
            "битрикс*",
        ],
    ),
    ("Bitrix24", &["bitrix24", "битрикс24", "битрикс 24"]),
    ("OpenCart", &["opencart", "опенкарт*"]),
    ("Joomla", &["joomla", "джумл*"]),
    ("MODX", &["modx"]),
    ("Taplink", &["taplink", "таплинк*"]),
    ("HTML", &["html", "html5"]),
    ("CSS", &["css", "css3", "scss", "sass"]),
    ("Tailwind", &["tailwind", "tailwindcss"]),
    ("Bootstrap", &["bootstrap"]),
    (
        "JavaScript",
        &["javascript", "js", "джаваскрипт*", "яваскрипт*"],
    ),
    ("TypeScript", &["typescript", "тайпскрипт*"]),
    ("jQuery", &["jquery"]),
    (
        "React",
        &[
            "react",
            "react.js",
            "reactjs",
            "реакт",
            "реакте",
            "реакта",
            "реактом",
        ],
    ),
    ("Next.js", &["next.js", "nextjs"]),
    ("Vue", &["vue", "vue.js", "vuejs", "nuxt", "nuxt.js"]),
    ("Angular", &["angular"]),
    ("Svelte", &["svelte"]),
    ("Node.js", &["node.js", "nodejs", "node", "нода", "ноде"]),
    ("NestJS", &["nestjs", "nest.js"]),
    ("PHP", &["php", "пхп"]),
    ("Laravel", &["laravel", "ларавел*"]),
    ("Symfony", &["symfony"]),
    ("Yii", &["yii", "yii2"]),
    ("Python", &["python", "питон*", "пайтон*"]),
    ("Django", &["django", "джанго"]),
    ("FastAPI", &["fastapi"]),
    ("Flask", &["flask"]),
    ("Go", &["golang"]),
    ("Rust", &["rust"]),
    ("Java", &["java"]),
    ("C#", &["c#", "си шарп"]),
    ("C++", &["c++"]),
    (".NET", &[".net", "asp.net", "dotnet"]),
    ("Ruby on Rails", &["ruby on rails", "rails"]),
    ("Ruby", &["ruby"]),
    ("GraphQL", &["graphql"]),
    ("SQL", &["sql"]),
    ("PostgreSQL", &["postgresql", "postgres", "постгрес*"]),
    ("MySQL", &["mysql"]),
    ("MongoDB", &["mongodb", "mongo"]),
    ("Redis", &["redis"]),
    ("ClickHouse", &["clickhouse"]),
    ("Kafka", &["kafka"]),
    ("RabbitMQ", &["rabbitmq"]),
    ("Celery", &["celery"]),
    ("Prisma", &["prisma"]),
    ("Firebase", &["firebase"]),
    ("Supabase", &["supabase"]),
    ("Docker", &["docker", "докер*"]),
    ("Kubernetes", &["kubernetes", "k8s"]),
    ("Linux", &["linux", "линукс*"]),
    ("Nginx", &["nginx"]),
    ("AWS", &["aws"]),
    ("Git", &["git"]),
    ("Stripe", &["stripe"]),
    ("Solidity", &["solidity"]),
    ("Web3", &["web3"]),
    // Mobile
    ("iOS", &["ios", "айос"]),
    ("Android", &["android", "андроид*"]),
    ("Swift", &["swift", "swiftui"]),
    ("Kotlin", &["kotlin", "котлин*"]),
    ("Flutter", &["flutter", "флаттер*"]),
    ("Dart", &["dart"]),
    (
        "React Native",
        &["react native", "react-native", "реакт нейтив"],
    ),
    ("Unity", &["unity", "юнити"]),
    ("Unreal Engine", &["unreal engine", "unreal", "анриал*"]),
    ("Godot", &["godot"]),
    // Bots, scraping, automation
    ("aiogram", &["aiogram", "айограм*"]),
    ("Telegraf", &["telegraf"]),
    ("grammY", &["grammy"]),
    ("Selenium", &["selenium", "селениум*"]),
    ("Playwright", &["playwright"]),
    ("Puppeteer", &["puppeteer"]),
    ("Scrapy", &["scrapy"]),
    ("Salebot", &["salebot", "сейлбот*", "салебот*"]),
    ("ManyChat", &["manychat"]),
    ("BotHelp", &["bothelp"]),
    ("n8n", &["n8n"]),
    ("Zapier", &["zapier"]),
    ("Make", &["make.com"]),
    (
        "amoCRM",
        &[
            "amocrm",
            "amo crm",
            "амоcrm",
            "амо срм",
            "амосрм",
            "амо crm",
        ],
    ),
    ("GetCourse", &["getcourse", "геткурс*", "get course"]),
    ("YCLIENTS", &["yclients"]),
    ("1C", &["1c", "1с"]),
    // Data
    ("Excel", &["excel", "ms excel", "эксел*"]),
    (
        "Google Sheets",
        &[
            "google sheets",
            "google таблиц*",
            "гугл таблиц*",
            "гугл-таблиц*",
            "google-таблиц*",
            "гугл шит*",
        ],
    ),
    ("VBA", &["vba"]),
    ("Power BI", &["power bi", "powerbi"]),
    ("Tableau", &["tableau"]),
    ("BigQuery", &["bigquery", "big query"]),
    ("Snowflake", &["snowflake"]),
    ("dbt", &["dbt"]),
    ("Airflow", &["airflow"]),
    ("Metabase", &["metabase"]),
    ("Looker Studio", &["looker studio", "looker"]),
    ("pandas", &["pandas"]),
    ("NumPy", &["numpy"]),
    ("Notion", &["notion", "ноушн*"]),
    ("Miro", &["miro"]),
    ("Trello", &["trello", "трелло"]),
    ("Jira", &["jira"]),
    // Marketing
    ("SEO", &["seo", "сео"]),
    ("SMM", &["smm", "смм"]),
    ("Targeting", &["таргет*"]),
    ("Google Ads", &["google ads", "гугл адс", "adwords"]),
    ("Meta Ads", &["meta ads", "facebook ads", "fb ads"]),
    (
        "Yandex Direct",
        &[
            "яндекс директ*",
            "яндекс.директ*",
            "yandex direct",
            "я.директ*",
        ],
    ),
    (
        "Yandex Metrica",
        &[
            "яндекс метрик*",
            "яндекс.метрик*",
            "yandex metrica",
            "yandex metrika",
        ],
    ),
    ("Google Analytics", &["google analytics", "ga4"]),
    ("Unisender", &["unisender", "юнисендер*"]),
    ("Mailchimp", &["mailchimp"]),
    ("Klaviyo", &["klaviyo"]),
    ("HubSpot", &["hubspot"]),
    ("Salesforce", &["salesforce"]),
    ("Google Tag Manager", &["google tag manager", "gtm"]),
    ("Wildberries", &["wildberries", "вайлдберриз", "вб", "wb"]),
    ("Ozon", &["ozon", "озон*"]),
    // Translation
    ("Trados", &["trados", "традос*"]),
    ("Smartcat", &["smartcat"]),
    ("memoQ", &["memoq"]),
];

/// The automaton over every spelling, and per pattern: (skill index, stem).
type SkillMatcher = (AhoCorasick, Vec<(usize, bool)>);
static SKILL_MATCHER: LazyLock<Option<SkillMatcher>> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut meta = Vec::new();
    for (i, (_, spellings)) in SKILLS.iter().enumerate() {
        for s in *spellings {
            let stem = s.ends_with('*');
            patterns.push(s.trim_end_matches('*').to_owned());
            meta.push((i, stem));
        }
    }
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&patterns)
        .ok()
        .map(|ac| (ac, meta))
});

fn skills_of(text: &str) -> Vec<String> {
    let Some((automaton, meta)) = SKILL_MATCHER.as_ref() else {
        return Vec::new();
    };
    let lc: String = text
        .chars()
        .map(|c| match lower(c) {
            'ё' => 'е',
            c => c,
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    for m in automaton.find_iter(&lc) {
        let (skill, stem) = meta[m.pattern().as_usize()];
        let before = lc[..m.start()].chars().next_back();
        let mut rest = lc[m.end()..].chars().peekable();
        if stem {
            while rest.next_if(|c| c.is_alphanumeric()).is_some() {}
        }
        let after = rest.next();
        let word_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if word_char(before) || word_char(after) {
            continue;
        }
        // `@figma_jobs`, `t.me/tilda_help`, `site.wix.com`: names inside handles and links.
        if before.is_some_and(|c| matches!(c, '@' | '/' | '.')) {
            continue;
        }
        let name = SKILLS[skill].0;
        if !out.iter().any(|s| s == name) {
            out.push(name.to_owned());
            if out.len() == MAX_SKILLS {
                break;
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Title
// ---------------------------------------------------------------------------------------

static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| regex(r"</?[A-Za-z][^<>]{0,60}>"));
static MD_LINK: LazyLock<Regex> = LazyLock::new(|| regex(r"\[([^\]\n]{1,200})\]\([^)\s]{1,500}\)"));
static HASHTAG: LazyLock<Regex> = LazyLock::new(|| regex(r"#[\w-]+"));
static URL: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\b(?:https?://|www\.)\S+|\bt\.me/\S+"));
/// Lines that only announce: channel and exchange boilerplate.
static ANNOUNCEMENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:(?:new job on|new project on|новый заказ на|новый проект на|заказ с|job from)\b.*|(?:репост(?:\s+из)?|repost|still hiring|актуально|we'?re hiring|hiring now|вакансия|vacancy|заказ|order|job|hiring|upd|update|обновлено|срочно|urgent|важно|внимание)\W*)$",
    )
});
/// Lines that only start a sentence the next line finishes ("Ищу" / "дизайнера логотипа").
static LEAD_IN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:ищу|ищем|требуется|требуются|нужен|нужна|нужно|нужны|в поиске|looking for|we are looking for|we're looking for|wanted|need|needed|задача|task|описание|description)\W*$",
    )
});
/// A greeting before the first real sentence.
static GREETING: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^(?:здравствуйте|добрый день|добрый вечер|доброе утро|всем привет|привет(?:ствую)?|hi|hello|hey)(?:\s+(?:all|everyone|всем|друзья|коллеги))?\s*[!,.]+\s*",
    )
});
/// Lines about pay or contact make poor titles when a better line follows.
static WEAK_TITLE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^(?:оплата|бюджет|budget|pay|rate|зп|цена|контакт|contact|писать|пишите|dm)\b")
});

/// Where a run of emoji stood between words: a possible sentence break.
const BREAK_MARK: char = '\u{1F}';

/// A line with markup, hashtags, links and decoration removed; emoji runs between words
/// become [`BREAK_MARK`].
fn clean_line(line: &str) -> String {
    let line = HTML_TAG.replace_all(line, "");
    let line = MD_LINK.replace_all(&line, "$1");
    let line = URL.replace_all(&line, "");
    let line = HASHTAG.replace_all(&line, "");
    let line = line.replace("**", "").replace("__", "").replace("~~", "");
    let mut kept = String::with_capacity(line.len());
    let mut in_decoration = false;
    for c in line.chars() {
        if is_decoration(c) || c == BREAK_MARK {
            if !in_decoration {
                kept.push(' ');
                kept.push(BREAK_MARK);
                kept.push(' ');
            }
            in_decoration = true;
            continue;
        }
        in_decoration = false;
        kept.push(if c == '`' { ' ' } else { c });
    }
    let joined = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = joined.trim_matches(|c: char| {
        matches!(
            c,
            '-' | '–' | '—' | '•' | '·' | '>' | '|' | ':' | ',' | ';' | '.' | '=' | '+' | '/' | '*'
        ) || ('\u{2190}'..='\u{21FF}').contains(&c)
            || c == BREAK_MARK
            || c.is_whitespace()
    });
    let trimmed = GREETING.replace(trimmed, "");
    trimmed.into_owned()
}

/// The line without [`BREAK_MARK`]s.
fn unmarked(line: &str) -> String {
    line.split(BREAK_MARK)
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Emoji, pictographs, arrows, dingbats, joiners and variation selectors.
fn is_decoration(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{2022}'
        | '\u{203C}' | '\u{2049}'
        | '\u{20E3}'
        | '\u{2300}'..='\u{23FF}'
        | '\u{2460}'..='\u{24FF}'
        | '\u{25A0}'..='\u{27BF}'
        | '\u{2900}'..='\u{297F}'
        | '\u{2B00}'..='\u{2BFF}'
        | '\u{3030}' | '\u{303D}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{1F000}'..='\u{1FAFF}'
        | '\u{E0020}'..='\u{E007F}')
}

fn title_of(text: &str) -> Option<String> {
    let mut lead_in: Option<String> = None;
    let mut weak: Option<String> = None;
    for raw in text.lines().take(40) {
        if is_forward_header(raw) {
            continue;
        }
        let line = clean_line(raw);
        let plain = unmarked(&line);
        if plain.chars().filter(|c| c.is_alphabetic()).count() < 3 || ANNOUNCEMENT.is_match(&plain)
        {
            continue;
        }
        if LEAD_IN.is_match(&plain) {
            if lead_in.is_none() {
                lead_in = Some(plain);
            }
            continue;
        }
        if WEAK_TITLE.is_match(&plain) && lead_in.is_none() {
            weak.get_or_insert(line);
            continue;
        }
        let line = match lead_in.take() {
            Some(lead) => format!("{lead} {}", lowercase_first(&line)),
            None => line,
        };
        return Some(title_line(&line));
    }
    lead_in.or(weak).map(|l| title_line(&l))
}

/// `Дизайнера логотипа` after `Ищу` reads `Ищу дизайнера логотипа`; an acronym stays.
fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match (chars.next(), chars.clone().next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => s.to_owned(),
    }
}

/// The first sentence when the line has more than one, in sentence case, at most
/// [`MAX_TITLE_CHARS`].
fn title_line(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut end = chars.len();
    let mut depth = 0i32;
    for i in 0..chars.len() {
        match chars[i] {
            '(' | '[' | '«' => depth += 1,
            ')' | ']' | '»' => depth -= 1,
            _ => {}
        }
        if i < 12 || depth > 0 {
            continue;
        }
        let next = chars.get(i + 1).copied();
        let after = chars.get(i + 2).copied();
        let starts_sentence =
            |c: Option<char>| c.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit());
        let cut = match chars[i] {
            // Not after an abbreviation such as `м.` or `т.е.`.
            '.' => {
                let token: Vec<char> = chars[..i]
                    .iter()
                    .rev()
                    .take_while(|c| !c.is_whitespace())
                    .copied()
                    .collect();
                // A capital after a word of 3+ characters (`м. Белорусская` is not a break),
                // or any letter after a word of 4+ (`руб. в месяц` is not one either).
                next == Some(' ')
                    && !token.contains(&'.')
                    && ((starts_sentence(after)
                        && (token.len() >= 3 || token.iter().all(char::is_ascii_digit)))
                        || (after.is_some_and(char::is_alphabetic) && token.len() >= 4))
            }
            '!' | '?' => next == Some(' ') && after.is_some_and(|c| c.is_alphanumeric()),
            BREAK_MARK => next == Some(' ') && starts_sentence(after),
            _ => false,
        };
        if cut {
            end = if chars[i] == '!' || chars[i] == '?' {
                i + 1
            } else {
                i
            };
            break;
        }
    }
    let sentence = unmarked(&chars[..end].iter().collect::<String>());
    let sentence = sentence.trim_end_matches([':', ',', ';', '-', '—']);
    let sentence = if shouting(sentence) {
        let lower = sentence.to_lowercase();
        let mut out = String::with_capacity(lower.len());
        let mut first = true;
        for c in lower.chars() {
            if first && c.is_alphabetic() {
                out.extend(c.to_uppercase());
                first = false;
            } else {
                out.push(c);
            }
        }
        out
    } else {
        sentence.to_owned()
    };
    let mut title = short_phrase(&sentence, MAX_TITLE_CHARS);
    if let Some(first) = title.chars().next()
        && first.is_lowercase()
    {
        title = first.to_uppercase().chain(title.chars().skip(1)).collect();
    }
    title
}

/// Mostly capital letters (`ИЩУ ИЛЛЮСТРАТОРА`), not a short acronym.
fn shouting(s: &str) -> bool {
    let letters: Vec<char> = s.chars().filter(|c| c.is_alphabetic()).collect();
    letters.len() >= 8
        && letters.iter().filter(|c| c.is_uppercase()).count() * 10 >= letters.len() * 8
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    fn b(min: f64, max: Option<f64>, currency: &str, basis: BudgetBasis) -> Option<Budget> {
        Some(Budget {
            min,
            max,
            currency: currency.into(),
            basis,
        })
    }
    use BudgetBasis::{Fixed, Hourly, Monthly};

    #[track_caller]
    fn budget_is(text: &str, expected: Option<Budget>) {
        let got = extract_budget(text);
        match (&expected, &got) {
            (None, None) => {}
            (Some(e), Some(g)) if budget_matches(e, g) => {}
            _ => panic!("{text:?}: expected {expected:?}, got {got:?}"),
        }
    }

    #[test]
    fn russian_budgets() {
        budget_is("Бюджет: 15 000 ₽", b(15_000.0, None, "RUB", Fixed));
        budget_is(
            "Бюджет: 15\u{a0}000\u{a0}₽, срок неделя",
            b(15_000.0, None, "RUB", Fixed),
        );
        budget_is(
            "Оплата от 30к руб за проект",
            b(30_000.0, None, "RUB", Fixed),
        );
        budget_is("Бюджет до 50 тыс.", b(50_000.0, None, "RUB", Fixed));
        budget_is("заплачу до 50 тыс. рублей", b(50_000.0, None, "RUB", Fixed));
        budget_is(
            "Бюджет от 20 до 35 тыс. руб.",
            b(20_000.0, Some(35_000.0), "RUB", Fixed),
        );
        budget_is(
            "Бюджет 30-40 тыс, зависит от сроков",
            b(30_000.0, Some(40_000.0), "RUB", Fixed),
        );
        budget_is(
            "Бюджет 15 000–20 000 ₽",
            b(15_000.0, Some(20_000.0), "RUB", Fixed),
        );
        budget_is(
            "зп 80к/мес, офис в центре",
            b(80_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "Оплата 25 000₽/мес на старте",
            b(25_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "Оклад 60 000 рублей + премии",
            b(60_000.0, None, "RUB", Monthly),
        );
        budget_is("Ставка 600₽/час", b(600.0, None, "RUB", Hourly));
        budget_is(
            "1200–1800 ₽ в час по итогам тестового",
            b(1200.0, Some(1800.0), "RUB", Hourly),
        );
        budget_is("Оплата 3000 грн за лендинг", b(3000.0, None, "UAH", Fixed));
        budget_is("Бюджет 50 000 тг", b(50_000.0, None, "KZT", Fixed));
        budget_is(
            "Заплачу 500 звёзд за стикерпак",
            b(500.0, None, "XTR", Fixed),
        );
        budget_is("Оплата 100 USDT, крипта", b(100.0, None, "USDT", Fixed));
        budget_is("Нужен логотип, 3к", b(3000.0, None, "RUB", Fixed));
        budget_is(
            "кто сделает парсер отзывов? 5к",
            b(5000.0, None, "RUB", Fixed),
        );
        budget_is(
            "Оплата 700₽ за ролик, на постоянку",
            b(700.0, None, "RUB", Fixed),
        );
        budget_is(
            "Текст на главную, 2500р. срочно",
            b(2500.0, None, "RUB", Fixed),
        );
        budget_is("Оплата 1,5к за баннер", b(1500.0, None, "RUB", Fixed));
    }

    #[test]
    fn english_budgets() {
        budget_is("Budget: $500", b(500.0, None, "USD", Fixed));
        budget_is(
            "budget 500$ for the whole thing",
            b(500.0, None, "USD", Fixed),
        );
        budget_is("Paying 500 usd", b(500.0, None, "USD", Fixed));
        budget_is("Rate: 20-30$/час", b(20.0, Some(30.0), "USD", Hourly));
        budget_is("$25/hr, 20h/week", b(25.0, None, "USD", Hourly));
        budget_is(
            "$35-50/h depending on experience",
            b(35.0, Some(50.0), "USD", Hourly),
        );
        budget_is("Pay: $6-8 per hour", b(6.0, Some(8.0), "USD", Hourly));
        budget_is("€1,200 for the full set", b(1200.0, None, "EUR", Fixed));
        budget_is("Budget $3-4k total", b(3000.0, Some(4000.0), "USD", Fixed));
        budget_is(
            "$2,000/mo retainer + bonus",
            b(2000.0, None, "USD", Monthly),
        );
        budget_is(
            "Monthly retainer $700, 3-month trial",
            b(700.0, None, "USD", Monthly),
        );
        budget_is("salary $3000 per month", b(3000.0, None, "USD", Monthly));
        budget_is(
            "budget <$100, need it this week",
            b(100.0, None, "USD", Fixed),
        );
        budget_is(
            "💵 Hourly: $20.00-$35.00",
            b(20.0, Some(35.0), "USD", Hourly),
        );
        budget_is("$25 each, 3 per week", b(25.0, None, "USD", Fixed));
    }

    #[test]
    fn amounts_that_are_not_budgets() {
        for text in [
            "оплата договорная",
            "Бюджет обсуждается, 3 экрана",
            "Оплата 2 раза в месяц",
            "Фитнес-блогер, 180к подписчиков, ищу монтажёра",
            "Нужно 3 тг-бота и 2 лендинга",
            "Proofreader for a 60k-word manuscript",
            "8 статей по 5-7к знаков",
            "Rate: $0.05/word, natives only",
            "Оплата 120₽ за 1000 зн. б/п",
            "Оплата 1500₽/10 мин готового звука",
            "~$20k/month ad spend, ROAS 1.6",
            "Рекламный бюджет 100к/мес",
            "Part-time, 20h/week, 9am-1pm EST",
            "Связь: +7 912 345-67-89",
            "iOS 17, Next.js 13+, 2 года опыта",
            "Тестовое оплачиваем 3000 ₽",
            "",
        ] {
            budget_is(text, None);
        }
        // The pay for the job, not the ad spend or the test task, is the budget.
        budget_is(
            "Бюджет на рекламу 60к/мес, з/п специалиста 20к + бонус",
            b(20_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "Тестовое оплачиваем 2 000 ₽.\nУсловия: фикс 45 000 ₽/мес",
            b(45_000.0, None, "RUB", Monthly),
        );
        budget_is(
            "~$20k/month ad spend. $2,000/mo retainer",
            b(2000.0, None, "USD", Monthly),
        );
    }

    #[test]
    fn exchange_desired_and_acceptable_budgets_make_a_range() {
        budget_is(
            "Макрос в Excel\n💰 Желаемый бюджет: до 3 000 ₽\nДопустимый: до 9 000 ₽\n👀 Предложений: 11",
            b(3000.0, Some(9000.0), "RUB", Fixed),
        );
    }

    #[test]
    fn budget_matching_tolerates_one_percent() {
        let e = b(1000.0, Some(2000.0), "USD", Fixed).unwrap();
        assert!(budget_matches(
            &e,
            &b(1005.0, Some(1990.0), "usd", Fixed).unwrap()
        ));
        assert!(!budget_matches(
            &e,
            &b(1050.0, Some(2000.0), "USD", Fixed).unwrap()
        ));
        assert!(!budget_matches(&e, &b(1000.0, None, "USD", Fixed).unwrap()));
        assert!(!budget_matches(
            &e,
            &b(1000.0, Some(2000.0), "EUR", Fixed).unwrap()
        ));
        assert!(!budget_matches(
            &e,
            &b(1000.0, Some(2000.0), "USD", Hourly).unwrap()
        ));
    }

    #[test]
    fn rates_convert_and_can_be_configured() {
        let rates = Rates::default();
        let usd = b(500.0, Some(700.0), "USD", Fixed).unwrap();
        assert_eq!(usd.top(), 700.0);
        assert_eq!(usd.amount_in("RUB", &rates), Some(63_000.0));
        assert_eq!(usd.amount_in("usdt", &rates), Some(700.0));
        let eur = usd.amount_in("EUR", &rates).unwrap();
        assert!((eur - 700.0 * 90.0 / 98.0).abs() < 1e-9);
        assert_eq!(usd.amount_in("BTC", &rates), None);
        assert_eq!(rates.rate("xtr"), Some(1.3));

        let custom = Rates::from_pairs([("RUB", 1.0), ("usd", 100.0)]).unwrap();
        assert_eq!(usd.amount_in("RUB", &custom), Some(70_000.0));
        assert_eq!(usd.amount_in("EUR", &custom), None);
        let custom = custom.with_rate("EUR", 110.0).unwrap();
        assert_eq!(custom.convert(110.0, "RUB", "EUR"), Some(1.0));
        assert!(matches!(
            Rates::from_pairs([("USD", 0.0)]),
            Err(RatesError::BadRate { .. })
        ));
        assert!(matches!(
            Rates::from_pairs([("US D", 1.0)]),
            Err(RatesError::BadCode(_))
        ));
        assert!(Rates::from_pairs([("USD", f64::NAN)]).is_err());
    }

    #[test]
    fn budgets_display_compactly() {
        let show = |min, max, cur: &str| b(min, max, cur, Fixed).unwrap().to_string();
        assert_eq!(show(15_000.0, Some(20_000.0), "RUB"), "15 000–20 000 ₽");
        assert_eq!(show(35.0, Some(50.0), "USD"), "$35–50");
        assert_eq!(show(1200.0, None, "EUR"), "€1200");
        assert_eq!(show(0.05, None, "USD"), "$0.05");
        assert_eq!(show(1_000_000.0, None, "KZT"), "1 000 000 ₸");
        assert_eq!(show(100.0, None, "usdt"), "100 USDT");
    }

    #[test]
    fn deadlines() {
        let d = |t: &str| extract_deadline(t);
        assert_eq!(d("Срок: 3 дня, бюджет 5к").as_deref(), Some("3 дня"));
        assert_eq!(d("Сроки — неделя").as_deref(), Some("неделя"));
        assert_eq!(d("Нужно до пятницы, пишите").as_deref(), Some("до пятницы"));
        assert_eq!(d("дедлайн 10 декабря").as_deref(), Some("10 декабря"));
        assert_eq!(d("Сдать к 15.12, оплата сразу").as_deref(), Some("к 15.12"));
        assert_eq!(d("Нужно сегодня!").as_deref(), Some("сегодня"));
        assert_eq!(d("СРОЧНО нужен дизайнер").as_deref(), Some("СРОЧНО"));
        assert_eq!(d("Deadline: Friday").as_deref(), Some("Friday"));
        assert_eq!(
            d("Need it done within 2 weeks.").as_deref(),
            Some("within 2 weeks")
        );
        assert_eq!(
            d("script ready, need it within 48h").as_deref(),
            Some("within 48h")
        );
        assert_eq!(d("need it this week").as_deref(), Some("this week"));
        assert_eq!(d("site is down, need a fix asap").as_deref(), Some("asap"));
        assert_eq!(
            d("Срок — до конца недели").as_deref(),
            Some("до конца недели")
        );
        // Not deadlines.
        for text in [
            "Бюджет 8000₽, сроки не горят",
            "Бюджет до 50 тыс.",
            "Deadline: flexible",
            "напоминание клиенту за 2 часа",
            "Timeline: ideally start within 2 weeks",
            "We reply to everyone within 5 working days",
            "Ответим всем в течение недели",
            "Оплата 2 раза в месяц",
        ] {
            assert_eq!(d(text), None, "{text}");
        }
        let long = format!("Срок: до 15 декабря {}", "очень ".repeat(30));
        assert!(d(&long).unwrap().chars().count() <= MAX_DEADLINE_CHARS);
    }

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

    #[test]
    fn contacts() {
        let c = |t: &str| extract_contact(t);
        assert_eq!(
            c("Бюджет 5к. Пишите @anna_design").as_deref(),
            Some("@anna_design")
        );
        assert_eq!(
            c("Для канала @big_channel_name нужен дизайнер. Контакт: @hr_olga").as_deref(),
            Some("@hr_olga")
        );
        assert_eq!(
            c("DM @lena_hires with GitHub").as_deref(),
            Some("@lena_hires")
        );
        assert_eq!(
            c("Отклики через бота: t.me/zernoipar_hr_bot").as_deref(),
            Some("https://t.me/zernoipar_hr_bot")
        );
        assert_eq!(
            c("WhatsApp: https://wa.me/79123456789").as_deref(),
            Some("https://wa.me/79123456789")
        );
        assert_eq!(
            c("Send CV to jobs@studio.io").as_deref(),
            Some("jobs@studio.io")
        );
        // Too short, part of an address, a post link, an inline bot: not contacts.
        assert_eq!(c("/extend @user 30d"), None);
        assert_eq!(c("https://t.me/channel/42"), None);
        assert_eq!(c("via @gif"), None);
        assert_eq!(c("пишите в лс"), None);
    }

    #[test]
    fn skills() {
        assert_eq!(
            extract_skills("Нужен дизайн в Фигме и фотошопе, потом вёрстка на Тильде. #figma"),
            ["Figma", "Photoshop", "Tilda"]
        );
        assert_eq!(
            extract_skills("React Native + Node.js, C++ и C# не нужны, 1С-Битрикс тоже"),
            ["React Native", "Node.js", "C++", "C#", "Bitrix"]
        );
        assert_eq!(
            extract_skills("Монтаж в After Effects / Premiere Pro / DaVinci, превью в Midjourney"),
            [
                "After Effects",
                "Premiere Pro",
                "DaVinci Resolve",
                "Midjourney"
            ]
        );
        assert_eq!(
            extract_skills("Выгрузка в 1С и Excel, SEO и SMM"),
            ["1C", "Excel", "SEO", "SMM"]
        );
        // Word boundaries, handles and ordinary words.
        assert!(extract_skills("robot reactivation, @figma_jobs, jsonl, реактивация").is_empty());
        let many = "python react vue php swift kotlin flutter figma excel seo smm wordpress";
        assert_eq!(extract_skills(many).len(), MAX_SKILLS);
        // Every spelling is lowercase (the text is lowercased before matching).
        for (name, spellings) in SKILLS {
            for s in *spellings {
                assert_eq!(*s, s.to_lowercase(), "{name}");
                assert!(!s.contains('ё'), "{name}");
            }
        }
    }

    #[test]
    fn titles() {
        let t = |text: &str| extract_title(text);
        assert_eq!(
            t("#вакансия #дизайн\nИщу\nдизайнера логотипа для кофейни ☕️\nБюджет 8000₽").as_deref(),
            Some("Ищу дизайнера логотипа для кофейни")
        );
        assert_eq!(
            t("Требуется:\nSMM-специалист в салон красоты").as_deref(),
            Some("Требуется SMM-специалист в салон красоты")
        );
        assert_eq!(
            t("Forwarded from Remote IT Jobs\n**Senior React dev** wanted 🚀 Remote, $50/h")
                .as_deref(),
            Some("Senior React dev wanted")
        );
        assert_eq!(
            t("🟢 New job on Upwork\n<b>Localize SaaS app into German &amp; French</b>\n💵 Fixed price: $900")
                .as_deref(),
            Some("Localize SaaS app into German & French")
        );
        assert_eq!(
            t("📌 Новый заказ на Kwork\nМакрос в Excel для сводной по складам").as_deref(),
            Some("Макрос в Excel для сводной по складам")
        );
        assert_eq!(
            t("🔥🔥 ИЩУ ИЛЛЮСТРАТОРА 🔥🔥").as_deref(),
            Some("Ищу иллюстратора")
        );
        assert_eq!(
            t("Здравствуйте! Нужен бот для записи в барбершоп. Бюджет 30к").as_deref(),
            Some("Нужен бот для записи в барбершоп")
        );
        assert_eq!(
            t("Салон красоты (Москва, м. Белорусская) ищет SMM-специалиста").as_deref(),
            Some("Салон красоты (Москва, м. Белорусская) ищет SMM-специалиста")
        );
        assert_eq!(
            t("need a [landing page](https://x.io) built. budget $300").as_deref(),
            Some("Need a landing page built")
        );
        assert_eq!(t("#вакансия #remote"), None);
        assert_eq!(t("🔥🔥🔥"), None);
        let long = format!("Нужен {} разработчик", "очень ".repeat(60));
        let title = t(&long).unwrap();
        assert!(title.chars().count() <= MAX_TITLE_CHARS, "{title}");
        assert!(title.ends_with("очень…"), "{title}");
    }

    #[test]
    fn a_whole_post() {
        let post = "#заказ #сайт #tilda\n\nНужен лендинг на Тильде для бренда косметики 🌿\n\
                    Что нужно:\n— главный экран + каталог\n— адаптив\n\
                    Срок: 7-10 дней\nБюджет: 25 000 ₽\nУдалённо.\n\n\
                    Писать в ЛС @anna_kosmetika с примерами работ на Tilda";
        let e = extract(post);
        assert_eq!(
            e.title.as_deref(),
            Some("Нужен лендинг на Тильде для бренда косметики")
        );
        assert_eq!(e.budget, b(25_000.0, None, "RUB", Fixed));
        assert_eq!(e.deadline.as_deref(), Some("7-10 дней"));
        assert_eq!(e.work_mode, Some(WorkMode::Remote));
        assert_eq!(e.skills, ["Tilda"]);
        assert_eq!(e.contact.as_deref(), Some("@anna_kosmetika"));
        assert!(!e.is_empty());
        assert!(extract("").is_empty());
    }

    #[test]
    fn huge_and_odd_inputs_are_bounded() {
        let huge = "Бюджет 5к ".repeat(100_000);
        let e = extract(&huge);
        assert_eq!(e.budget, b(5000.0, None, "RUB", Fixed));
        for odd in [
            "$",
            "₽",
            "1",
            "9".repeat(40).as_str(),
            "$-",
            "от до",
            "@",
            "t.me/",
            "#",
            "\u{1F}",
        ] {
            let _ = extract(odd);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn never_panics_on_arbitrary_text(text in any::<String>()) {
            let e = extract(&text);
            prop_assert!(e.skills.len() <= MAX_SKILLS);
            if let Some(t) = &e.title {
                prop_assert!(t.chars().count() <= MAX_TITLE_CHARS);
            }
            if let Some(d) = &e.deadline {
                prop_assert!(d.chars().count() <= MAX_DEADLINE_CHARS);
            }
            if let Some(b) = &e.budget {
                prop_assert!(b.min.is_finite() && b.min > 0.0);
                prop_assert!(b.max.is_none_or(|m| m > b.min));
            }
        }

        #[test]
        fn never_panics_on_money_like_text(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("$".to_owned()), Just("₽".to_owned()), Just("к".to_owned()),
                    Just("тыс.".to_owned()), Just("-".to_owned()), Just("–".to_owned()),
                    Just(" ".to_owned()), Just("\n".to_owned()), Just("до ".to_owned()),
                    Just("от ".to_owned()), Just("/час".to_owned()), Just("/mo".to_owned()),
                    Just("Бюджет: ".to_owned()), Just("@".to_owned()), Just("t.me/".to_owned()),
                    Just(",".to_owned()), Just(".".to_owned()), Just("срок".to_owned()),
                    Just("😀".to_owned()), Just("\u{a0}".to_owned()),
                    "[0-9]{1,6}", "[a-zа-я_]{1,8}",
                ],
                0..60,
            )
        ) {
            let text = parts.concat();
            let e = extract(&text);
            if let Some(b) = &e.budget {
                prop_assert!(b.min.is_finite() && b.min > 0.0, "{text:?} {b:?}");
            }
        }
    }
}
