//! The language a reply is written in.

/// The language a reply is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Ru,
    En,
}

impl Lang {
    /// The code stored for it.
    pub fn code(self) -> &'static str {
        match self {
            Self::Ru => "ru",
            Self::En => "en",
        }
    }

    /// Russian for users of the Russian-speaking world and for users whose client does not
    /// say; English for everyone else.
    pub fn from_code(code: Option<&str>) -> Self {
        let Some(code) = code else {
            return Self::Ru;
        };
        let primary = code
            .split(['-', '_'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match primary.as_str() {
            "" | "ru" | "uk" | "be" | "kk" | "uz" | "ky" | "tg" | "hy" | "az" | "ka" | "tk"
            | "mo" => Self::Ru,
            _ => Self::En,
        }
    }

    pub(crate) fn pick(self, ru: &'static str, en: &'static str) -> &'static str {
        match self {
            Self::Ru => ru,
            Self::En => en,
        }
    }
}
