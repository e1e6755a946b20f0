//! Text normalization for keyword matching.
//!
//! Channel posts are written by people who want to be found (or to dodge filters): they use
//! full-width letters, ligatures, zero-width spaces inside words, `ё` and `е` interchangeably,
//! and Latin letters that look like Cyrillic ones (and the other way round). [`normalize`] maps
//! all of these to one form, so a keyword rule written once matches every spelling. The result
//! is only ever used for matching; the original text is what gets stored and shown.
//!
//! [`normalize`] is idempotent: `normalize(&normalize(s)) == normalize(s)` for every string.

use unicode_normalization::{IsNormalized, UnicodeNormalization, char::is_combining_mark};

/// Normalizes text for keyword matching.
///
/// In order:
/// 1. zero-width and bidi/format characters are removed (U+200B..U+200F, U+2060..U+2064,
///    U+2066..U+2069, U+FEFF, U+202A..U+202E, U+00AD soft hyphen, U+180E), so `раз\u{200B}работчик`
///    is one word again;
/// 2. Unicode NFKC: full-width letters, ligatures (`ﬁ` → `fi`), superscripts and the like
///    become plain characters;
/// 3. lowercase, with `ё` → `е` and final sigma `ς` → `σ`;
/// 4. whitespace runs of any kind become one ASCII space; the ends are trimmed;
/// 5. Latin/Cyrillic look-alikes are folded per word: in a word that is mostly Cyrillic and
///    whose Latin letters are all look-alikes (`a c e o p x y k m t h b i`), those become
///    Cyrillic (`дизaйн` → `дизайн`); in a mostly-Latin word, Cyrillic look-alikes become Latin
///    (`pуthоn` → `python`). A word with as many letters of both scripts, or whose minority
///    script has a letter without a look-alike (`вакансияjava`), is left alone.
///
/// Digits, emoji and punctuation (`#`, `@`, `+`, ...) are kept. A letter directly followed by a
/// combining mark is never remapped (that could create a new composed character and break
/// idempotence).
pub fn normalize(text: &str) -> String {
    // Steps 1-2.
    let composed: String = text
        .chars()
        .filter(|&c| !is_format_char(c))
        .nfkc()
        .collect();
    // Step 3 (case). Lowercasing NFKC text can, for a handful of characters, produce text that
    // is not NFKC any more; normalize once more in that case.
    let mut lowered = lowercase(&composed);
    if !is_nfkc(&lowered) {
        lowered = lowercase(&lowered.nfkc().collect::<String>());
    }

    // Steps 3 (ё, ς) and 4, in one pass.
    let mut out = String::with_capacity(lowered.len());
    let mut pending_space = false;
    let mut chars = lowered.chars().peekable();
    while let Some(c) = chars.next() {
        if is_format_char(c) {
            continue;
        }
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        let next_is_mark = chars.peek().is_some_and(|&n| is_combining_mark(n));
        let c = match c {
            'ё' if !next_is_mark => 'е',
            'ς' if !next_is_mark => 'σ',
            other => other,
        };
        out.push(c);
    }

    // Step 5.
    fold_lookalikes(&mut out);
    out
}

/// Iterates over the hashtags of already [normalized](normalize) text, without the `#`.
///
/// A hashtag is `#` followed by letters, digits, combining marks or `_`, and not preceded by
/// one of them (`a#b` has none). `"#remote #дизайн"` yields `"remote"`, `"дизайн"`.
pub fn hashtags(normalized: &str) -> impl Iterator<Item = &str> {
    let mut rest_start = 0;
    std::iter::from_fn(move || {
        loop {
            let rest = normalized.get(rest_start..)?;
            let offset = rest.find('#')?;
            let hash = rest_start + offset;
            let tag_start = hash + 1;
            let preceded_by_word = normalized[..hash]
                .chars()
                .next_back()
                .is_some_and(is_hashtag_char);
            let tag_len = normalized[tag_start..]
                .char_indices()
                .find(|&(_, c)| !is_hashtag_char(c))
                .map_or(normalized.len() - tag_start, |(i, _)| i);
            rest_start = tag_start + tag_len;
            if tag_len > 0 && !preceded_by_word {
                return Some(&normalized[tag_start..tag_start + tag_len]);
            }
        }
    })
}

/// Whether `c` may appear inside a hashtag: a letter, a digit, a combining mark or `_`.
pub fn is_hashtag_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || is_combining_mark(c)
}

/// Zero-width, bidi-control and other invisible format characters that only hide words.
fn is_format_char(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

fn is_nfkc(s: &str) -> bool {
    match unicode_normalization::is_nfkc_quick(s.chars()) {
        IsNormalized::Yes => true,
        IsNormalized::No => false,
        IsNormalized::Maybe => unicode_normalization::is_nfkc(s),
    }
}

fn lowercase(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.extend(c.to_lowercase());
    }
    out
}

/// Latin and Cyrillic lowercase letters that look alike (mostly as capitals, which is how
/// they are usually smuggled in before lowercasing).
const LOOKALIKES: [(char, char); 13] = [
    ('a', 'а'),
    ('b', 'в'),
    ('c', 'с'),
    ('e', 'е'),
    ('h', 'н'),
    ('i', 'і'),
    ('k', 'к'),
    ('m', 'м'),
    ('o', 'о'),
    ('p', 'р'),
    ('t', 'т'),
    ('x', 'х'),
    ('y', 'у'),
];

fn latin_to_cyrillic(c: char) -> Option<char> {
    LOOKALIKES.iter().find(|&&(l, _)| l == c).map(|&(_, r)| r)
}

fn cyrillic_to_latin(c: char) -> Option<char> {
    LOOKALIKES.iter().find(|&&(_, r)| r == c).map(|&(l, _)| l)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Cyrillic,
    Other,
}

fn script(c: char) -> Script {
    match c {
        'a'..='z' | 'A'..='Z' => Script::Latin,
        '\u{00C0}'..='\u{024F}' if c.is_alphabetic() && c != '\u{00D7}' && c != '\u{00F7}' => {
            Script::Latin
        }
        '\u{0400}'..='\u{052F}' if c.is_alphabetic() => Script::Cyrillic,
        _ => Script::Other,
    }
}

/// Folds look-alike letters word by word (a word = a run of alphanumerics and combining
/// marks). Rewrites `text` only when some word needs it.
fn fold_lookalikes(text: &mut String) {
    // Fast path: ASCII text has no Cyrillic letters, so no word can be mixed.
    if text.is_ascii() {
        return;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut word_start = None;
    for (i, c) in text.char_indices() {
        let in_word = c.is_alphanumeric() || is_combining_mark(c);
        match (in_word, word_start) {
            (true, None) => word_start = Some(i),
            (false, Some(start)) => {
                changed |= fold_word(&text[start..i], &mut out);
                word_start = None;
                out.push(c);
            }
            (false, None) => out.push(c),
            (true, Some(_)) => {}
        }
    }
    if let Some(start) = word_start {
        changed |= fold_word(&text[start..], &mut out);
    }
    if changed {
        *text = out;
    }
}

/// Appends `word` to `out`, folded if it is a mixed-script word with a clear majority whose
/// minority letters all have look-alikes. Returns whether anything was folded.
fn fold_word(word: &str, out: &mut String) -> bool {
    let (mut latin, mut cyrillic) = (0usize, 0usize);
    let (mut latin_unfoldable, mut cyrillic_unfoldable) = (false, false);
    for c in word.chars() {
        match script(c) {
            Script::Latin => {
                latin += 1;
                latin_unfoldable |= latin_to_cyrillic(c).is_none();
            }
            Script::Cyrillic => {
                cyrillic += 1;
                cyrillic_unfoldable |= cyrillic_to_latin(c).is_none();
            }
            Script::Other => {}
        }
    }
    let map: fn(char) -> Option<char> = if latin > 0 && cyrillic > latin && !latin_unfoldable {
        latin_to_cyrillic
    } else if cyrillic > 0 && latin > cyrillic && !cyrillic_unfoldable {
        cyrillic_to_latin
    } else {
        out.push_str(word);
        return false;
    };
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        let next_is_mark = chars.peek().is_some_and(|&n| is_combining_mark(n));
        match map(c) {
            Some(folded) if !next_is_mark => out.push(folded),
            _ => out.push(c),
        }
    }
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    #[track_caller]
    fn check(input: &str, expected: &str) {
        let got = normalize(input);
        assert_eq!(got, expected, "normalize({input:?})");
        assert_eq!(
            normalize(&got),
            got,
            "normalize is not idempotent on {input:?}"
        );
    }

    #[test]
    fn nfkc_folds_compatibility_forms() {
        check("ＰＹＴＨＯＮ ｄｅｖ", "python dev"); // full-width
        check("ﬁnance ﬂow", "finance flow"); // ligatures
        check("Ⅻ ²", "xii 2"); // roman numeral, superscript
        check("е\u{0308}лка", "елка"); // decomposed ё
        check("café", "café"); // precomposed é stays é
        check("cafe\u{0301}", "café");
    }

    #[test]
    fn case_and_yo() {
        check("Ищем РАЗРАБОТЧИКА", "ищем разработчика");
        check("Ёлка ещё", "елка еще");
        check("ΟΔΟΣ", "οδοσ"); // final sigma folded
        check("Straße", "straße");
    }

    #[test]
    fn invisible_characters_are_removed() {
        check("раз\u{200B}работчик", "разработчик");
        check("py\u{00AD}thon", "python");
        check("\u{FEFF}job\u{2060}s", "jobs");
        check("de\u{200D}v\u{200C}ops", "devops");
        check("\u{202E}reverse\u{202C}", "reverse");
    }

    #[test]
    fn whitespace_is_collapsed_and_trimmed() {
        check("  landing \t\n\u{00A0} page\u{3000}", "landing page");
        check("", "");
        check(" \n\t ", "");
        check("\u{200B}", "");
    }

    #[test]
    fn mixed_script_words_are_folded() {
        check("pуthоn", "python"); // Cyrillic у, о in a Latin word
        check("дизaйн", "дизайн"); // Latin a in a Cyrillic word
        check("ДИЗAЙНEР", "дизайнер"); // Latin capitals A, E
        check("Pеact", "peact"); // nonsense but consistent: mostly Latin
        check("Kот", "кот");
        check("вакансияjava", "вакансияjava"); // j, v have no look-alikes: two glued words
        check("oк", "oк"); // tie: left alone
        check("#дизaйн @pуthоn_dev", "#дизайн @python_dev");
        check("сорт cop", "сорт cop"); // single-script words are untouched
    }

    #[test]
    fn emoji_punctuation_and_other_scripts_are_kept() {
        check("🔥🔥🔥", "🔥🔥🔥");
        check("👨‍💻 Senior!", "👨💻 senior!"); // the ZWJ is dropped, the emoji stay
        check("C++ / C# / .NET", "c++ / c# / .net");
        check("$5000 + 20%", "$5000 + 20%");
        check("مطلوب مبرمج", "مطلوب مبرمج"); // RTL text
        check("\u{200F}שלום\u{200E} world", "שלום world");
        check("日本語のテキスト", "日本語のテキスト");
        check("ｶﾀｶﾅ", "カタカナ"); // half-width katakana
    }

    #[test]
    fn hashtags_are_listed_without_the_hash() {
        let text = normalize("Ищем #Дизайнер (#remote, #UI_UX) a#b ## #");
        let tags: Vec<&str> = hashtags(&text).collect();
        assert_eq!(tags, ["дизайнер", "remote", "ui_ux"]);
        assert_eq!(hashtags("").count(), 0);
        assert_eq!(hashtags("#a#b").collect::<Vec<_>>(), ["a"]);
    }

    #[test]
    fn every_single_character_normalizes_idempotently() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let s = c.to_string();
            let once = normalize(&s);
            assert_eq!(normalize(&once), once, "U+{:04X}", c as u32);
            // Inside a mixed-script word, for the characters that can interact with letters.
            if (c as u32) >= 0x3000 && !is_combining_mark(c) {
                continue;
            }
            let word = format!("дизa{c}йн");
            let once = normalize(&word);
            assert_eq!(normalize(&once), once, "in a word: U+{:04X}", c as u32);
        }
    }

    proptest! {
        #[test]
        fn normalize_is_idempotent(s in any::<String>()) {
            let once = normalize(&s);
            prop_assert_eq!(normalize(&once), once);
        }

        #[test]
        fn normalize_is_idempotent_on_mixed_text(
            s in "[a-zA-Zа-яА-ЯёЁ0-9 #@_\u{0300}-\u{0310}\u{200B}-\u{200F}\u{00A0}ｆＡﬁ]{0,40}"
        ) {
            let once = normalize(&s);
            prop_assert_eq!(normalize(&once), once.clone());
            prop_assert!(!once.starts_with(' ') && !once.ends_with(' '));
            prop_assert!(!once.contains("  "));
        }
    }
}
