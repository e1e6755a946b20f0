//! Reading a post's content features: [`fingerprint`] normalizes the text, drops a forward
//! marker and hashtags, and turns each sentence into word stems (marked when the sentence
//! carries a contact), numbers and amounts of money with their notation folded (read by the
//! shared money tokenizer, [`crate::amount`]), and contacts (`@handles`, `t.me/…` and other
//! links, phone numbers), each hashed with the stable `feature_hash`.

use unicode_normalization::char::is_combining_mark;

use super::feature_set::{FeatureKind, Fingerprint};
use super::stem::{is_cyrillic, stem};
use crate::amount::Reading;
use crate::normalize::{is_hashtag_char, normalize};

/// Computes the fingerprint of a post's text (as posted; it is [normalized](normalize) here).
pub fn fingerprint(text: &str) -> Fingerprint {
    let mut raw = Vec::new();
    let mut first = true;
    for line in text.lines() {
        let line = normalize(line);
        if line.is_empty() {
            continue;
        }
        let body = if std::mem::take(&mut first) {
            strip_forward_marker(&line)
        } else {
            &line
        };
        for sentence in sentences(body) {
            extract(sentence, &mut raw);
        }
    }
    Fingerprint::from_raw(raw)
}

/// Markers of a forwarded or re-posted message, as the first line starts (normalized).
const FORWARD_MARKERS: [&str; 9] = [
    "forwarded from",
    "forwarded message",
    "переслано от",
    "переслано из",
    "пересланное сообщение",
    "репост",
    "repost",
    "fwd",
    "fw:",
];

/// Drops a forward marker line (`forwarded from x`), or the marker before a `:` on it
/// (`репост: нужен лендинг` keeps `нужен лендинг`).
fn strip_forward_marker(line: &str) -> &str {
    for marker in FORWARD_MARKERS {
        if let Some(rest) = line.strip_prefix(marker)
            && !rest.chars().next().is_some_and(char::is_alphanumeric)
        {
            return rest.split_once(':').map_or("", |(_, after)| after);
        }
    }
    line
}

/// Splits a normalized line at `.`, `!`, `?`, `;` and `…` followed by a space.
fn sentences(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut prev_end = false;
        for (i, c) in rest.char_indices() {
            if c == ' ' && prev_end {
                let (head, tail) = rest.split_at(i);
                rest = &tail[1..];
                return Some(head);
            }
            prev_end = matches!(c, '.' | '!' | '?' | ';' | '…');
        }
        Some(std::mem::take(&mut rest))
    })
}

/// One number found in a sentence.
#[derive(Debug, Clone, Copy)]
struct Num {
    /// Value in thousandths.
    milli: u64,
    money: bool,
    /// A multiplier (`к`, `тыс`, `млн`) was written on it.
    multiplied: bool,
    /// Char index just past the number and its suffixes.
    end: usize,
}

/// Appends the features of one normalized sentence.
fn extract(sentence: &str, out: &mut Vec<(u32, FeatureKind)>) {
    let cs: Vec<char> = sentence.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut nums: Vec<Num> = Vec::new();
    let mut contact = false;
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        let prev = i.checked_sub(1).map(|p| cs[p]);
        let at_boundary = !prev.is_some_and(|p| p.is_alphanumeric() || p == '_');
        if c == '#' && !prev.is_some_and(is_hashtag_char) {
            i += 1;
            while i < cs.len() && is_hashtag_char(cs[i]) {
                i += 1;
            }
            continue;
        }
        if c == '@' && cs.get(i + 1).is_some_and(|&n| is_handle_char(n)) {
            let start = i + 1;
            i = start;
            while i < cs.len() && is_handle_char(cs[i]) {
                i += 1;
            }
            let handle: String = cs[start..i].iter().collect();
            out.push((feature_hash(b'c', &handle), FeatureKind::Contact));
            contact = true;
            continue;
        }
        if at_boundary && let Some((end, value)) = url_at(&cs, i) {
            out.push((feature_hash(b'c', &value), FeatureKind::Contact));
            contact = true;
            i = end;
            continue;
        }
        if c == '+'
            && cs.get(i + 1).is_some_and(char::is_ascii_digit)
            && let Some((end, digits)) = phone_at(&cs, i + 1)
        {
            out.push((feature_hash(b'c', &digits), FeatureKind::Contact));
            contact = true;
            i = end;
            continue;
        }
        if c.is_ascii_digit()
            && at_boundary
            && let Some(num) = number_at(&cs, i)
        {
            if let Some(last) = nums.last_mut()
                && is_range(&cs, last.end, i)
            {
                if num.multiplied && !last.multiplied {
                    let scaled = last.milli.saturating_mul(multiplier_of(&cs, i, num.end));
                    if scaled <= num.milli {
                        last.milli = scaled;
                        last.multiplied = true;
                    }
                }
                let money = last.money || num.money;
                last.money = money;
                nums.push(Num { money, ..num });
            } else {
                nums.push(num);
            }
            i = num.end.max(i + 1);
            continue;
        }
        if c.is_alphanumeric() {
            let end = word_end(&cs, i);
            let word: String = cs[i..end].iter().collect();
            if word.contains('-') {
                // `лид-формы` is also written `лидформы`; `моушн-дизайнер` must keep `дизайнер`.
                words.extend(word.split('-').map(str::to_owned));
                words.push(word.replace('-', ""));
            } else {
                words.push(word);
            }
            i = end;
            continue;
        }
        i += 1;
    }
    for n in nums {
        let kind = if n.money {
            FeatureKind::Money
        } else {
            FeatureKind::Number
        };
        out.push((feature_hash(b'n', &n.milli.to_string()), kind));
    }
    let kind = if contact {
        FeatureKind::ContactLineWord
    } else {
        FeatureKind::Word
    };
    for w in words {
        if let Some(stem) = stem(&w) {
            out.push((feature_hash(b'w', &stem), kind));
        }
    }
}

fn is_handle_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A URL starting at `i`: `(end, contact value)`. `t.me/name` is the contact `name`, like
/// `@name`; other URLs are kept without scheme and `www.`.
fn url_at(cs: &[char], i: usize) -> Option<(usize, String)> {
    let end = cs[i..]
        .iter()
        .position(|c| c.is_whitespace())
        .map_or(cs.len(), |p| i + p);
    let token: String = cs[i..end].iter().collect();
    let token = token.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '/');
    let bare = token
        .strip_prefix("https://")
        .or_else(|| token.strip_prefix("http://"))
        .unwrap_or(token);
    let bare = bare.strip_prefix("www.").unwrap_or(bare);
    let explicit = token.len() != bare.len();
    let (host, path) = bare.split_once('/').unwrap_or((bare, ""));
    let dotted_host = host.contains('.')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && host
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()));
    if !dotted_host || (!explicit && path.is_empty()) {
        return None;
    }
    let consumed = i + cs[i..end].len().min(token.chars().count());
    if matches!(host, "t.me" | "telegram.me") {
        let name: String = path.chars().take_while(|&c| is_handle_char(c)).collect();
        if !name.is_empty() {
            return Some((consumed.max(i + 1), name));
        }
    }
    Some((consumed.max(i + 1), bare.trim_end_matches('/').to_owned()))
}

/// A phone number whose digits start at `i` (after a `+`): digits, `*` masks, spaces,
/// dashes and parentheses, at least 7 digits or masks. Returns `(end, digits)`.
fn phone_at(cs: &[char], i: usize) -> Option<(usize, String)> {
    let mut end = i;
    let mut digits = String::new();
    while end < cs.len() && matches!(cs[end], '0'..='9' | '*' | ' ' | '-' | '(' | ')') {
        if cs[end] != ' ' && cs[end] != '-' && cs[end] != '(' && cs[end] != ')' {
            digits.push(cs[end]);
        }
        end += 1;
    }
    (digits.len() >= 7).then_some((end, digits))
}

/// Whether the chars between a number ending at `prev_end` and one starting at `start` are
/// a range dash (with optional spaces).
fn is_range(cs: &[char], prev_end: usize, start: usize) -> bool {
    if prev_end > start {
        return false;
    }
    let between: String = cs[prev_end..start].iter().filter(|&&c| c != ' ').collect();
    matches!(between.as_str(), "-" | "–" | "—")
}

/// The multiplier written after the digits of a number spanning `start..end` (1 if none).
fn multiplier_of(cs: &[char], start: usize, end: usize) -> u64 {
    let text: String = cs[start..end].iter().collect();
    if text.contains("млн") || text.contains("кк") || text.contains("kk") {
        1_000_000
    } else {
        1_000
    }
}

/// Reads the number starting at `i` with its notation ([`Reading::FINGERPRINT`]): digit
/// groups (`25 000`, `1,200`), a decimal part, a multiplier and a currency before or after
/// it. Letters glued to it (`48ч`, `20h`, `9am`) are taken with it, not read as a word.
fn number_at(cs: &[char], i: usize) -> Option<Num> {
    let reading = &Reading::FINGERPRINT;
    let amount = reading.amount_at(cs, i)?;
    let multiplied = amount.multiplier.is_some();
    Some(Num {
        milli: amount
            .numeral
            .milli()
            .saturating_mul(amount.multiplier.unwrap_or(1)),
        money: multiplied || amount.currency.is_some() || reading.currency_before(cs, i).is_some(),
        multiplied,
        end: amount.glued_word_end.unwrap_or(amount.end),
    })
}

/// End of the word starting at `i`: letters, digits and combining marks, with inner hyphens
/// between letters of one script (`лид-формы`), but not across scripts (`php-разработчик`).
/// A hyphenated word yields its parts and the joined form.
fn word_end(cs: &[char], i: usize) -> usize {
    let mut k = i;
    while k < cs.len() {
        let c = cs[k];
        if c.is_alphanumeric() || is_combining_mark(c) {
            k += 1;
            continue;
        }
        if c == '-'
            && k > i
            && let Some(&next) = cs.get(k + 1)
            && next.is_alphabetic()
            && cs[k - 1].is_alphabetic()
            && is_cyrillic(next) == is_cyrillic(cs[k - 1])
        {
            k += 1;
            continue;
        }
        break;
    }
    k
}

/// Stable 29-bit hash of a feature (FNV-1a 64, folded). Part of the stored format.
fn feature_hash(tag: u8, text: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in std::iter::once(&tag).chain(text.as_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    ((h >> 32) as u32 ^ h as u32) >> 3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes of the features of one kind in a text's fingerprint.
    fn hashes(text: &str, kind: FeatureKind) -> Vec<u32> {
        fingerprint(text)
            .features()
            .filter(|&(_, k)| k == kind)
            .map(|(h, _)| h)
            .collect()
    }

    #[test]
    fn numbers_are_read_in_every_notation() {
        let money = |text: &str| hashes(text, FeatureKind::Money);
        let expected = money("25000 руб");
        assert_eq!(expected.len(), 1);
        for text in [
            "25 000 ₽",
            "25к",
            "25 тыс.",
            "25 тыс руб",
            "₽25000",
            "25 000р",
            "25k",
        ] {
            assert_eq!(money(text), expected, "{text}");
        }
        assert_eq!(money("$1,200-1,500"), money("$1.2-1.5k"));
        assert_eq!(money("30-40к").len(), 2);
        assert_eq!(money("30-40к"), money("30 000 - 40 000 ₽"));
        assert_eq!(money("$35-50/h"), money("35-50 usd"));
        assert!(money("8 статей, 2 раза в месяц").is_empty());
    }

    #[test]
    fn contacts_in_links_and_handles_are_one_feature() {
        let contacts = |text: &str| hashes(text, FeatureKind::Contact);
        assert_eq!(
            contacts("пишите @Zerno_HR"),
            contacts("https://t.me/zerno_hr")
        );
        assert_eq!(contacts("звоните +7 (999) 123-45-67").len(), 1);
        assert_eq!(contacts("github.com/k-sergeev-dev, резюме").len(), 1);
        assert!(contacts("по text.ru от 90%").is_empty());
    }
}
