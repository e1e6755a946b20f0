//! How multipliers and currencies are spelled around a number, and finding a spelling at a
//! position of lowercase text. The spellings themselves are in the sibling `vocabulary`.

/// How a spelling must stand in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Exactly this: a sign (`$`), or a whole word (`k` in `5k`, not in `5kg`).
    Exact,
    /// Exactly this word, and an abbreviation dot if one follows (`т.`, `млн.`).
    ExactDot,
    /// A word starting with this, and an abbreviation dot if one follows (`руб`, `рублей`,
    /// `руб.`).
    Stem,
}

/// Where a spelling after a number may stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Right after the number: `5k`.
    Glued,
    /// After one space: `5 тыс`.
    Spaced,
    /// Either.
    Any,
}

/// How one reading takes a spelling.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Way {
    form: Form,
    place: Place,
}

impl Way {
    pub(crate) const fn new(form: Form, place: Place) -> Way {
        Way { form, place }
    }
}

/// The readings that share the spelling tables, each with its column in them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Column {
    Budget = 0,
    Fingerprint = 1,
}

/// One way to write a multiplier or a currency, what it means, and how each reading takes
/// it (by [`Column`]; `None`: not at all).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spelling<T> {
    /// The lowercase text.
    pub token: &'static str,
    /// What it stands for: a factor, or a currency code.
    pub means: T,
    ways: [Option<Way>; 2],
}

/// A spelling of `means`, as the budget extractor and the fingerprint take it.
pub(crate) const fn spelled<T>(
    token: &'static str,
    means: T,
    budget: Option<Way>,
    fingerprint: Option<Way>,
) -> Spelling<T> {
    Spelling {
        token,
        means,
        ways: [budget, fingerprint],
    }
}

pub(crate) fn is_letter(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphabetic())
}

/// Whether `cs[at..]` starts with `token`.
pub(crate) fn starts_with(cs: &[char], at: usize, token: &str) -> bool {
    (at..)
        .zip(token.chars())
        .all(|(i, t)| cs.get(i) == Some(&t))
}

/// Where the run of letters starting at `at` ends.
pub(crate) fn letters_end(cs: &[char], mut at: usize) -> usize {
    while is_letter(cs.get(at)) {
        at += 1;
    }
    at
}

impl<T: Copy> Spelling<T> {
    /// Whether the reading of `column` knows this spelling.
    pub(crate) fn known_to(&self, column: Column) -> bool {
        self.ways[column as usize].is_some()
    }

    /// Where this spelling ends if it stands at `cs[at]` as the reading of `column` takes it,
    /// `spaced` telling whether one space separates it from the number.
    pub(crate) fn at(&self, column: Column, cs: &[char], at: usize, spaced: bool) -> Option<usize> {
        let way = self.ways[column as usize]?;
        let place_ok = match way.place {
            Place::Glued => !spaced,
            Place::Spaced => spaced,
            Place::Any => true,
        };
        if !place_ok || !starts_with(cs, at, self.token) {
            return None;
        }
        let mut end = at + self.token.chars().count();
        match way.form {
            Form::Stem => end = letters_end(cs, end),
            Form::Exact | Form::ExactDot => {
                if self.ends_in_letter() && is_letter(cs.get(end)) {
                    return None;
                }
            }
        }
        if way.form != Form::Exact && cs.get(end) == Some(&'.') {
            end += 1;
        }
        Some(end)
    }

    pub(crate) fn ends_in_letter(&self) -> bool {
        self.token.chars().last().is_some_and(char::is_alphabetic)
    }

    pub(crate) fn starts_with_letter(&self) -> bool {
        self.token.chars().next().is_some_and(char::is_alphabetic)
    }
}
