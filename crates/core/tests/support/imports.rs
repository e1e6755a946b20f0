//! The import graph of one crate's files, shared by the tests that check it (the workspace's
//! circles in `import_circles.rs`, the bot crate's rooms in `crates/bot/tests/bots/imports.rs`,
//! which includes this file): a file names another through `use` or an inline path
//! (`crate::a::b`, `super::c`); a name reached through a re-export counts as the file that
//! defines it; `mod` declarations and test modules do not count.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub type ModPath = Vec<String>;

/// Source without comments, string and char literals, and the trailing test module.
pub fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i = src[i..].find("*/").map_or(b.len(), |j| i + j + 2);
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let end = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                i = src[start..]
                    .find(&end)
                    .map_or(b.len(), |j| start + j + end.len());
                out.push_str("\"\"");
            } else {
                out.push('r');
                i += 1;
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3; // a char literal ('a'); lifetimes stay
        } else {
            let c = src[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    // The test module: `#[cfg(test)]`, any further attributes, then `mod tests`.
    let test_module = out
        .match_indices("#[cfg(test)]")
        .map(|(k, _)| k)
        .find(|&k| {
            let mut rest = out[k + "#[cfg(test)]".len()..].trim_start();
            while rest.starts_with("#[") {
                rest = rest.find(']').map_or("", |e| rest[e + 1..].trim_start());
            }
            rest.starts_with("mod tests")
        });
    match test_module {
        Some(k) => out[..k].to_owned(),
        None => out,
    }
}

/// `a::{b, c::{d, e as f}, self}` → `[a::b, a::c::d, a::c::e, a]`.
pub fn expand(prefix: &[String], tree: &str, out: &mut Vec<ModPath>) {
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for ch in tree.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    parts.push(cur);
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        if let Some(open) = part.find('{') {
            let head: Vec<String> = part[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let inner = part[open + 1..part.rfind('}').unwrap_or(part.len())].to_owned();
            expand(&[prefix, &head].concat(), &inner, out);
        } else {
            let path = part.split(" as ").next().unwrap_or(part);
            let segs: Vec<String> = path.split("::").map(|s| s.trim().to_owned()).collect();
            if segs == ["self"] {
                out.push(prefix.to_vec());
            } else {
                out.push([prefix, &segs].concat());
            }
        }
    }
}

pub struct File {
    /// `(re-exported, path)` of each `use`.
    pub uses: Vec<(bool, ModPath)>,
    /// Inline paths starting with `crate`, `super` or `self`.
    pub inline: Vec<ModPath>,
    /// The source without comments, literals and the test module.
    pub src: String,
}

pub fn parse(src: &str) -> File {
    let src = strip(src);
    let mut uses = Vec::new();
    let mut rest = String::new();
    let mut at = 0;
    while let Some(k) = src[at..].find("use ") {
        let start = at + k;
        let before = src[..start].trim_end();
        let word_start =
            start == 0 || !src[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if !word_start {
            rest.push_str(&src[at..start + 4]);
            at = start + 4;
            continue;
        }
        let end = src[start..].find(';').map_or(src.len(), |j| start + j);
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let mut paths = Vec::new();
        expand(&[], &src[start + 4..end], &mut paths);
        uses.extend(paths.into_iter().map(|p| (public, p)));
        rest.push_str(&src[at..start]);
        at = end;
    }
    rest.push_str(&src[at..]);
    let mut inline = Vec::new();
    for head in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(k) = rest[from..].find(head) {
            let s = from + k;
            from = s + head.len();
            if rest[..s].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = rest[s..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            inline.push(
                path.split("::")
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect(),
            );
        }
    }
    File { uses, inline, src }
}

pub fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "main" | "mod")
    ) {
        parts.pop();
    }
    parts
}

pub fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<ModPath, (String, File)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_owned();
            let file = parse(&std::fs::read_to_string(&p).unwrap());
            out.insert(
                module_of(&rel),
                (rel.to_string_lossy().replace('\\', "/"), file),
            );
        }
    }
}

pub struct Graph {
    /// Leave out `pub use` re-exports (a facade, not a dependency) when true.
    pub reexports_only: bool,
    pub files: BTreeMap<ModPath, (String, File)>,
}

impl Graph {
    /// The module a path names relative to `at`, or `None` for another crate's.
    fn absolute(&self, at: &ModPath, segs: &[String]) -> Option<ModPath> {
        let mut cur = at.clone();
        let mut segs = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => {
                cur.clear();
                segs = &segs[1..];
            }
            Some("super" | "self") => {
                while let Some(s) = segs.first().filter(|s| *s == "super" || *s == "self") {
                    if s == "super" {
                        cur.pop();
                    }
                    segs = &segs[1..];
                }
            }
            Some(first)
                if self
                    .files
                    .contains_key(&[cur.clone(), vec![first.to_owned()]].concat()) => {}
            _ => return None,
        }
        Some([cur, segs.to_vec()].concat())
    }

    fn defines(&self, module: &ModPath, name: &str) -> bool {
        let src = &self.files[module].1.src;
        [
            "fn ", "struct ", "enum ", "const ", "type ", "trait ", "static ", "mod ",
        ]
        .iter()
        .any(|kw| {
            src.match_indices(&format!("{kw}{name}")).any(|(i, _)| {
                let after = src[i + kw.len() + name.len()..].chars().next();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
    }

    /// The file defining what `path` names, following re-exports.
    fn resolve(&self, path: &ModPath, depth: usize) -> Option<ModPath> {
        let k = (0..=path.len())
            .rev()
            .find(|k| self.files.contains_key(&path[..*k]))?;
        let module = path[..k].to_vec();
        let Some(name) = path.get(k) else {
            return Some(module);
        };
        if depth > 10 || self.defines(&module, name) {
            return Some(module);
        }
        let file = &self.files[&module].1;
        for (public, segs) in &file.uses {
            if *public
                && segs.last() == Some(name)
                && let Some(target) = self.absolute(&module, segs).filter(|t| t != path)
            {
                return self.resolve(&[target, path[k + 1..].to_vec()].concat(), depth + 1);
            }
        }
        for (public, segs) in &file.uses {
            if *public
                && segs.last().is_some_and(|s| s == "*")
                && let Some(t) = self.absolute(&module, &segs[..segs.len() - 1])
                && self.files.contains_key(&t)
                && self.defines(&t, name)
            {
                return self.resolve(&[t, path[k..].to_vec()].concat(), depth + 1);
            }
        }
        Some(module)
    }

    pub fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges = BTreeMap::new();
        for (module, (_, file)) in &self.files {
            let targets: BTreeSet<ModPath> = file
                .uses
                .iter()
                .filter(|(public, _)| !self.reexports_only || !public)
                .map(|(_, p)| p)
                .chain(&file.inline)
                .filter_map(|p| self.absolute(module, p))
                .filter_map(|p| self.resolve(&p, 0))
                .filter(|t| t != module)
                .collect();
            edges.insert(module.clone(), targets);
        }
        edges
    }
}

/// The strongly connected sets of files (Tarjan).
pub fn circles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in &s.edges[v] {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                set.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(set);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

impl Graph {
    /// The graph of the files under `src`.
    pub fn of(src: &Path) -> Self {
        let mut files = BTreeMap::new();
        walk(src, src, &mut files);
        Graph {
            reexports_only: true,
            files,
        }
    }

    /// A file's path under `src/` (`router/mod.rs`).
    pub fn name(&self, m: &ModPath) -> String {
        self.files[m].0.clone()
    }
}
