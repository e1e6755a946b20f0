//! Reading amounts as people write them: a number with its notation (digit groups `25 000`,
//! `1,200`, decimals `1.5`), a multiplier (`k`, `к`, `тыс`, `млн`) and a currency (`$`, `₽`,
//! `руб`, `usd`, …) before or after it. One tokenizer for everyone who reads money: the budget
//! extractor ([`crate::extract`]), the near-duplicate fingerprint ([`crate::dedup`]) and the
//! facts of job feeds ([`price`]).
//!
//! Its users read the same notation with different strictness. Each states its own (a
//! `Reading`: a notation, a column of the spelling tables and three rules), so that sharing
//! the tokenizer changed no result:
//!
//! * the budget extractor (`Reading::BUDGET`) decides what a post's budget is: currencies are
//!   many and their words may be inflected (`рублей`, `долларов`), a word with a hyphenated
//!   tail is no currency (`3 тг-бота`), a currency ends the amount, and a number reads at most
//!   two decimals and twelve head digits (the extractor also drops a bare number with letters
//!   glued to it: `20h`, `3d`);
//! * the fingerprint (`Reading::FINGERPRINT`) folds every number a post states into one
//!   value whatever its notation (`25 000 ₽` = `25к` = `25 тыс.`): it reads any number of
//!   decimals, keeps reading after a currency sign (`$5k`), knows `кк` and `т.р.`, and its
//!   currencies are a short list of exact words;
//! * [`price`] reads a feed's machine-written price (`$1,500`, `$15.00`, `1,000 EUR`): only
//!   `,` groups and `.` decimals, and the whole text must be the price.
//!
//! Positions are char indices into lowercase text (`&[char]`), so that a caller keeps its
//! own view of the context around an amount.

mod numeral;
mod spelling;
mod vocabulary;

#[cfg(test)]
mod tests;

pub(crate) use numeral::Numeral;
pub(crate) use spelling::{is_letter, letters_end, starts_with};

use numeral::{Notation, numeral};
use spelling::{Column, Spelling};
use vocabulary::{CURRENCIES_AFTER, CURRENCIES_BEFORE, FEED_SIGNS, MULTIPLIERS};

/// How one user of this module reads amounts: the notation of numbers, the multipliers and
/// currencies it knows, and the few rules where readings differ.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    notation: Notation,
    /// Its column in the spelling tables of the sibling `vocabulary`.
    column: Column,
    /// Whether a sign after the number may be followed by more (`5$ к`); otherwise a
    /// currency ends the amount.
    read_on_after_sign: bool,
    /// Whether a currency word with a hyphenated tail is a word of its own (`3 тг-бота`).
    hyphenated_tail_is_no_currency: bool,
    /// Whether `р.` right after an abbreviated multiplier names roubles (`50т.р.`).
    roubles_after_abbreviated_multiplier: bool,
}

/// An amount as written: its number, multiplier and the currency written after it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Amount {
    pub numeral: Numeral,
    /// The factor of a multiplier (`к`: 1000, `млн`: 1,000,000).
    pub multiplier: Option<u64>,
    /// The code of the currency written after the number.
    pub currency: Option<&'static str>,
    /// Char index just past the amount.
    pub end: usize,
    /// Where the letters glued to the amount end (`20h`, `9am`, `3d`), when reading stopped
    /// at such a word.
    pub glued_word_end: Option<usize>,
}

impl Reading {
    /// What the budget extractor reads (see the module docs).
    pub(crate) const BUDGET: Reading = Reading {
        notation: Notation {
            group_marks: &[' ', ',', '.'],
            decimal_marks: &[',', '.'],
            zero_head_groups: false,
            max_head_digits: 12,
            max_decimals: 2,
            decimals_after_punctuation_groups: true,
        },
        column: Column::Budget,
        read_on_after_sign: false,
        hyphenated_tail_is_no_currency: true,
        roubles_after_abbreviated_multiplier: false,
    };

    /// What the near-duplicate fingerprint reads (see the module docs).
    pub(crate) const FINGERPRINT: Reading = Reading {
        notation: Notation {
            group_marks: &[' ', ',', '.'],
            decimal_marks: &[',', '.'],
            zero_head_groups: true,
            max_head_digits: usize::MAX,
            max_decimals: usize::MAX,
            decimals_after_punctuation_groups: false,
        },
        column: Column::Fingerprint,
        read_on_after_sign: true,
        hyphenated_tail_is_no_currency: false,
        roubles_after_abbreviated_multiplier: true,
    };

    /// The amount whose first digit is `cs[at]`: the number, then at most two of a
    /// multiplier and a currency (each glued or after one space), in either order.
    /// `None` when the notation reads no number there.
    pub(crate) fn amount_at(&self, cs: &[char], at: usize) -> Option<Amount> {
        let numeral = numeral(cs, at, &self.notation)?;
        let mut amount = Amount {
            end: numeral.end,
            numeral,
            multiplier: None,
            currency: None,
            glued_word_end: None,
        };
        for _ in 0..2 {
            let spaced = cs.get(amount.end) == Some(&' ');
            let at = amount.end + usize::from(spaced);
            if amount.multiplier.is_none()
                && let Some((factor, end)) = self.find(MULTIPLIERS, cs, at, spaced)
            {
                amount.multiplier = Some(factor);
                amount.end = end;
                if self.roubles_after_abbreviated_multiplier
                    && cs[end - 1] == '.'
                    && starts_with(cs, end, "р.")
                {
                    amount.currency.get_or_insert("RUB");
                    amount.end += 2;
                }
                continue;
            }
            if let Some((spelling, end)) = self.currency_after(cs, at, spaced) {
                amount.currency.get_or_insert(spelling.means);
                amount.end = end;
                if self.read_on_after_sign && !spelling.starts_with_letter() {
                    continue;
                }
                break;
            }
            if !spaced && is_letter(cs.get(at)) {
                amount.glued_word_end = Some(letters_end(cs, at));
            }
            break;
        }
        Some(amount)
    }

    /// The first spelling in `table` that stands at `cs[at]`: its meaning and where it ends.
    fn find<T: Copy>(
        &self,
        table: &[Spelling<T>],
        cs: &[char],
        at: usize,
        spaced: bool,
    ) -> Option<(T, usize)> {
        table
            .iter()
            .find_map(|s| s.at(self.column, cs, at, spaced).map(|end| (s.means, end)))
    }

    /// The currencies this reading knows before a number, in order.
    fn signs_and_words_before(&self) -> impl Iterator<Item = &'static Spelling<&'static str>> {
        let column = self.column;
        CURRENCIES_BEFORE.iter().filter(move |s| s.known_to(column))
    }

    /// A currency written right after an amount, at `cs[at]`: the spelling and where it ends.
    fn currency_after(
        &self,
        cs: &[char],
        at: usize,
        spaced: bool,
    ) -> Option<(&'static Spelling<&'static str>, usize)> {
        CURRENCIES_AFTER.iter().find_map(|spelling| {
            let mut end = spelling.at(self.column, cs, at, spaced)?;
            if self.hyphenated_tail_is_no_currency
                && spelling.ends_in_letter()
                && cs.get(end) == Some(&'-')
                && is_letter(cs.get(end + 1))
            {
                return None;
            }
            // `⭐️`: the star with its emoji variation selector.
            if spelling.means == "XTR" && cs.get(end) == Some(&'\u{fe0f}') {
                end += 1;
            }
            Some((spelling, end))
        })
    }

    /// A currency written right before the amount whose first digit is `cs[at]` (one space
    /// between them at most): its code and where it starts. A word (`usd 50`) must not be
    /// the tail of a longer one.
    pub(crate) fn currency_before(&self, cs: &[char], at: usize) -> Option<(&'static str, usize)> {
        let mut end = at;
        if end > 0 && cs[end - 1] == ' ' {
            end -= 1;
        }
        self.signs_and_words_before().find_map(|spelling| {
            let start = end.checked_sub(spelling.token.chars().count())?;
            let glued_to_word =
                spelling.starts_with_letter() && start > 0 && cs[start - 1].is_alphanumeric();
            (starts_with(cs, start, spelling.token) && !glued_to_word)
                .then_some((spelling.means, start))
        })
    }

    /// A currency sign (not a word) of those written before amounts, starting at `cs[at]`:
    /// its code and where it ends.
    pub(crate) fn sign_at(&self, cs: &[char], at: usize) -> Option<(&'static str, usize)> {
        self.signs_and_words_before().find_map(|spelling| {
            (!spelling.starts_with_letter() && starts_with(cs, at, spelling.token))
                .then(|| (spelling.means, at + spelling.token.chars().count()))
        })
    }
}

/// A price read by [`price`].
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    /// The amount.
    pub value: f64,
    /// The ISO code of its currency, when written (`$` is `USD`).
    pub currency: Option<String>,
}

/// Feeds group thousands with `,` and write decimals with `.`, any number of them.
const FEED_NOTATION: Notation = Notation {
    group_marks: &[','],
    decimal_marks: &['.'],
    zero_head_groups: true,
    max_head_digits: usize::MAX,
    max_decimals: usize::MAX,
    decimals_after_punctuation_groups: true,
};

/// A price written on its own, as job feeds write it: `$1,500`, `$15.00`, `€ 20`, `1,000 EUR`
/// (a sign before it or an ISO code after it, or neither). `None` unless the whole text
/// (trimmed) is one such price.
pub fn price(text: &str) -> Option<Price> {
    let text = text.trim();
    let (sign, rest) = FEED_SIGNS
        .iter()
        .find_map(|&(sign, code)| Some((Some(code), text.strip_prefix(sign)?.trim_start())))
        .unwrap_or((None, text));
    let cs: Vec<char> = rest.chars().collect();
    let numeral = numeral(&cs, 0, &FEED_NOTATION)?;
    let tail: String = cs[numeral.end..].iter().collect();
    let code = tail.trim_start();
    let currency = if tail.is_empty() {
        sign.map(str::to_owned)
    } else if sign.is_none()
        && code.len() < tail.len()
        && code.len() == 3
        && code.chars().all(|c| c.is_ascii_uppercase())
    {
        Some(code.to_owned())
    } else {
        return None;
    };
    Some(Price {
        value: numeral.value(),
        currency,
    })
}
