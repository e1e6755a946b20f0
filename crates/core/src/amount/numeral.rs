//! The digits of a written number: thousands groups (`15 000`, `1,200`, `1.200.000`) and a
//! decimal part (`2.5`, `0,05`), read by a [`Notation`].

/// How digit groups and decimals are read. The readings differ where their users need them
/// to (see [`super::Reading`]); every field says what one notation accepts and another not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Notation {
    /// Characters that separate thousands groups (one kind per number: `1,200,000`, not
    /// `1,200 000`).
    pub group_marks: &'static [char],
    /// Characters that start a decimal part.
    pub decimal_marks: &'static [char],
    /// Whether a head starting with `0` may take groups (`0,500` as 500).
    pub zero_head_groups: bool,
    /// The longest first run of digits that is still a number.
    pub max_head_digits: usize,
    /// The most decimals: after a longer run the number ends before its mark.
    pub max_decimals: usize,
    /// Whether a number grouped with `,` or `.` may still take decimals (`1,200.50`).
    pub decimals_after_punctuation_groups: bool,
}

/// A number as written, separators dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Numeral {
    /// The integer digits, groups joined (`15 000` → `15000`).
    pub(crate) int: String,
    /// The decimal digits (`2.50` → `50`); empty when none were written.
    pub(crate) frac: String,
    /// Char index just past the number.
    pub(crate) end: usize,
}

impl Numeral {
    /// The value, as the decimal number written (`1,234.56` → 1234.56, correctly rounded).
    pub(crate) fn value(&self) -> f64 {
        let written = if self.frac.is_empty() {
            self.int.clone()
        } else {
            format!("{}.{}", self.int, self.frac)
        };
        written.parse().unwrap_or(f64::NAN)
    }

    /// The value in exact thousandths, saturating: decimals past the third are cut, and of a
    /// longer integer only the last 15 digits count (a stable key, not arithmetic).
    pub(crate) fn milli(&self) -> u64 {
        let int: u64 = self
            .int
            .get(self.int.len().saturating_sub(15)..)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut frac: String = self.frac.chars().take(3).collect();
        while frac.len() < 3 {
            frac.push('0');
        }
        int.saturating_mul(1000)
            .saturating_add(frac.parse().unwrap_or(0))
    }
}

/// The number whose first digit is `cs[at]`; `None` when there is no digit there or the
/// head is longer than the notation allows.
pub(crate) fn numeral(cs: &[char], at: usize, notation: &Notation) -> Option<Numeral> {
    let digit = |i: usize| cs.get(i).is_some_and(char::is_ascii_digit);
    let mut i = at;
    while digit(i) {
        i += 1;
    }
    let mut int: String = cs[at..i].iter().collect();
    if int.is_empty() || int.len() > notation.max_head_digits {
        return None;
    }
    // Thousands groups: a mark followed by exactly three digits, after a 1-3 digit head.
    let mut group_mark = None;
    if int.len() <= 3 && (notation.zero_head_groups || !int.starts_with('0')) {
        while let Some(&mark) = cs.get(i) {
            let ok = notation.group_marks.contains(&mark)
                && group_mark.is_none_or(|g| g == mark)
                && (1..=3).all(|k| digit(i + k))
                && !digit(i + 4);
            if !ok {
                break;
            }
            group_mark = Some(mark);
            int.extend(&cs[i + 1..i + 4]);
            i += 4;
        }
    }
    let mut frac = String::new();
    let decimals_allowed =
        notation.decimals_after_punctuation_groups || !matches!(group_mark, Some(',' | '.'));
    if let Some(&mark) = cs.get(i)
        && decimals_allowed
        && notation.decimal_marks.contains(&mark)
        && group_mark != Some(mark)
        && digit(i + 1)
    {
        let mut j = i + 1;
        while digit(j) {
            j += 1;
        }
        if j - i - 1 <= notation.max_decimals {
            frac = cs[i + 1..j].iter().collect();
            i = j;
        }
    }
    Some(Numeral { int, frac, end: i })
}
