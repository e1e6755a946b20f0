//! The lexical pieces of TDLib's HTML reader: its notion of space and HTML character
//! references (`&lt;`, `&#65;`, `&#x42;`).

/// TDLib's `is_space`: the NUL byte counts as space, which also stops scans at the end.
pub(super) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0 | 0x0b | 0x0c)
}

/// Decodes an HTML character reference at `pos` (which holds `&`).
/// Returns the code point and the position after it, or `None` when it is not one
/// Telegram understands (then the `&` is kept literally).
pub(super) fn decode_html_entity(b: &[u8], pos: usize) -> Option<(u32, usize)> {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut end = pos + 1;
    let res: u32;
    if at(pos + 1) == b'#' {
        end += 1;
        let mut r: u32 = 0;
        if at(pos + 2) == b'x' {
            end += 1;
            while at(end).is_ascii_hexdigit() {
                r = r * 16 + char::from(at(end)).to_digit(16).unwrap_or(0);
                end += 1;
                if r >= 0x10ffff {
                    return None;
                }
            }
        } else {
            while at(end).is_ascii_digit() {
                r = r * 10 + u32::from(at(end) - b'0');
                end += 1;
                if r >= 0x10ffff {
                    return None;
                }
            }
        }
        if r == 0 || end - pos >= 10 {
            return None;
        }
        res = r;
    } else {
        while at(end).is_ascii_alphabetic() {
            end += 1;
        }
        res = match &b[pos + 1..end] {
            b"lt" => u32::from(b'<'),
            b"gt" => u32::from(b'>'),
            b"amp" => u32::from(b'&'),
            b"quot" => u32::from(b'"'),
            _ => return None,
        };
    }
    if at(end) == b';' {
        end += 1;
    }
    Some((res, end))
}

pub(super) const BAD_SURROGATES: &str = "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units";

pub(super) fn push_code_point(out: &mut Vec<u8>, cp: u32) -> Result<(), String> {
    let ch = char::from_u32(cp).ok_or_else(|| BAD_SURROGATES.to_owned())?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    Ok(())
}
