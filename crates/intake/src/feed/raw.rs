//! A second, shallow read of the feed XML for what feed-rs drops: elements of job-board
//! namespaces inside items (LaraJobs' `<job:location>`, `<job:tags>` …).

use quick_xml::Reader;
use quick_xml::events::Event;

/// Namespace prefixes whose elements feed-rs already understands or that carry no job facts.
const KNOWN_PREFIXES: &[&str] = &[
    "atom",
    "content",
    "dc",
    "dcterms",
    "media",
    "itunes",
    "googleplay",
    "podcast",
    "wfw",
    "slash",
    "sy",
    "rdf",
    "georss",
    "geo",
    "feedburner",
    "thr",
    "xhtml",
];

/// The longest extension value kept, in bytes.
const MAX_VALUE_BYTES: usize = 4 * 1024;

/// What the raw read found in one `<item>` / `<entry>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawItem {
    /// `<guid>` (RSS) or `<id>` (Atom), trimmed.
    pub guid: Option<String>,
    /// `<link>` text (RSS), trimmed.
    pub link: Option<String>,
    /// Direct children in other namespaces: `(local name, text)`.
    pub extensions: Vec<(String, String)>,
}

/// Reads the items of an RSS or Atom document, at most `max_items`. Stops quietly at the
/// first XML error (feed-rs has already judged the document; this read only adds facts).
pub(crate) fn raw_items(xml: &[u8], max_items: usize) -> Vec<RawItem> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut items = Vec::new();
    let mut depth = 0usize;
    // Depth of the open item element, if inside one.
    let mut item_depth: Option<usize> = None;
    let mut current = RawItem::default();
    // The child being captured: (prefix, local name, text so far).
    let mut capture: Option<(Option<String>, String, String)> = None;

    while let Ok(event) = reader.read_event_into(&mut buf) {
        match event {
            Event::Start(start) => {
                depth += 1;
                let name = start.name();
                let local = AsRef::<str>::as_ref(&name.local_name()).to_owned();
                let prefix = name.prefix().map(|p| AsRef::<str>::as_ref(&p).to_owned());
                match item_depth {
                    None if prefix.is_none() && (local == "item" || local == "entry") => {
                        item_depth = Some(depth);
                        current = RawItem::default();
                    }
                    Some(d) if depth == d + 1 => {
                        let wanted = match &prefix {
                            None => local == "guid" || local == "id" || local == "link",
                            Some(p) => !KNOWN_PREFIXES.contains(&p.as_str()),
                        };
                        if wanted {
                            capture = Some((prefix, local, String::new()));
                        }
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                if let Some(d) = item_depth {
                    if depth == d + 1 {
                        if let Some((prefix, local, text)) = capture.take() {
                            let value = text.trim().to_owned();
                            match prefix {
                                None if local == "link" => current.link = Some(value),
                                None => current.guid = Some(value),
                                Some(_) => current.extensions.push((local, value)),
                            }
                        }
                    } else if depth == d {
                        items.push(std::mem::take(&mut current));
                        item_depth = None;
                        if items.len() >= max_items {
                            break;
                        }
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(text) => {
                if let Some((_, _, value)) = &mut capture {
                    push_bounded(value, &text.xml10_content());
                }
            }
            Event::CData(data) => {
                if let Some((_, _, value)) = &mut capture {
                    push_bounded(value, &data);
                }
            }
            Event::GeneralRef(reference) => {
                if let Some((_, _, value)) = &mut capture {
                    let resolved = match reference.resolve_char_ref() {
                        Ok(Some(c)) => c.to_string(),
                        _ => html_escape::decode_html_entities(&format!(
                            "&{};",
                            reference.xml10_content()
                        ))
                        .into_owned(),
                    };
                    push_bounded(value, &resolved);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    items
}

fn push_bounded(value: &mut String, piece: &str) {
    for c in piece.chars() {
        if value.len() + c.len_utf8() > MAX_VALUE_BYTES {
            return;
        }
        value.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_children_of_items_are_collected() {
        let xml = br#"<rss xmlns:job="https://larajobs.com" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
            <title>T</title><job:location>not in an item</job:location>
            <item><title>A</title><link>https://x/1</link><guid>g1</guid>
              <dc:creator>Someone</dc:creator>
              <job:location><![CDATA[ Munich, Germany ]]></job:location>
              <job:tags>a,b &amp; c</job:tags>
              <job:salary><![CDATA[ ]]></job:salary>
            </item>
            <item><title>B</title><link>https://x/2</link></item>
        </channel></rss>"#;
        let items = raw_items(xml, 100);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].guid.as_deref(), Some("g1"));
        assert_eq!(items[0].link.as_deref(), Some("https://x/1"));
        assert_eq!(
            items[0].extensions,
            [
                ("location".to_owned(), "Munich, Germany".to_owned()),
                ("tags".to_owned(), "a,b & c".to_owned()),
                ("salary".to_owned(), String::new()),
            ]
        );
        assert_eq!(items[1].guid, None);
        assert_eq!(items[1].link.as_deref(), Some("https://x/2"));
        assert!(items[1].extensions.is_empty());
        assert_eq!(raw_items(xml, 1).len(), 1);
    }
}
