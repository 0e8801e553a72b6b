//! The library's layering (src/lib.rs): every `crate::` path in a module's
//! source names a module of a lower layer, or its own. So no module imports
//! one above it, and no two modules import each other.

use std::collections::BTreeSet;
use std::path::Path;

/// Layers, lowest first; a module may use its own layer's module and the
/// layers before it, never a sibling of its own layer.
const LAYERS: &[&[&str]] = &[
    &[
        "error",
        "metadata",
        "linalg",
        "least_squares",
        "scheme",
        "status",
        "track",
    ],
    &["named", "misfit"],
    &["camera"],
    &["model"],
    &["solver", "gpu", "constrained"],
    &["objective"],
    &["scenario"],
    &["engine"],
    &["sweep", "ga", "dataset", "throughput"],
    &["io"],
    &["plot"],
    &["workflow"],
    &["text"],
    &["jobs"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a source text names through `crate::`, including
/// inside `use crate::{a, b::c}` groups.
fn used_modules(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                used.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            used.insert(name);
        }
    }
    used
}

#[test]
fn no_module_uses_one_above_it_or_a_sibling() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut violations = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_string_lossy().trim_end_matches(".rs").to_string();
        if ["lib", "main", "cli"].contains(&module.as_str()) {
            continue;
        }
        let own = layer_of(&module)
            .unwrap_or_else(|| panic!("{module} (src/{}) is in no layer", relative.display()));
        let text = std::fs::read_to_string(&file).unwrap();
        for used in used_modules(&text) {
            // `crate::VERSION` and the like: the crate root, not a module.
            let Some(layer) = layer_of(&used) else {
                assert!(
                    used.chars().next().is_some_and(|c| c.is_uppercase()),
                    "src/{} uses crate::{used}, which is in no layer",
                    relative.display()
                );
                continue;
            };
            checked += 1;
            if used != module && layer >= own {
                violations.push(format!(
                    "src/{} ({module}, layer {own}) uses crate::{used} (layer {layer})",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} uses found: is the scan broken?"
    );
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_scan_sees_grouped_and_nested_paths() {
    let used = used_modules("use crate::{gpu::Gpu, model};\nlet x = crate::io::read();");
    let expected: BTreeSet<String> = ["gpu", "model", "io"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(used, expected);
}

/// Every function in `files` with its length in lines and where it starts,
/// found by its head (`fn`, `pub fn`, `pub(crate) fn`, `const fn`, …) and
/// the closing brace at the head's indentation.
fn function_lengths(files: &[std::path::PathBuf]) -> Vec<(usize, String)> {
    let mut lengths = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let indent = line.len() - line.trim_start().len();
            let mut head = line.trim_start();
            for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
                head = head.strip_prefix(prefix).unwrap_or(head);
            }
            if head.starts_with("fn ") && !head.ends_with(';') {
                let close = format!("{}}}", &line[..indent]);
                let end = (i + 1..lines.len())
                    .find(|&j| lines[j].starts_with(&close))
                    .unwrap_or(lines.len() - 1);
                lengths.push((end - i + 1, format!("{}:{}", file.display(), i + 1)));
                i = end;
            }
            i += 1;
        }
    }
    lengths.sort();
    lengths
}

/// The CLI parses, calls one workflow and prints: no function in it grows
/// past 60 lines (a longer one is holding workflow logic, or printing that
/// belongs in a function of its own).
#[test]
fn cli_functions_stay_short() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli"),
        &mut files,
    );
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli.rs"));
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs"));
    let longest = function_lengths(&files).pop().expect("functions");
    assert!(longest.0 > 10, "no function found: the scan is broken");
    assert!(
        longest.0 <= 60,
        "{} is {} lines long; keep CLI functions to 60 lines",
        longest.1,
        longest.0
    );
    eprintln!("longest CLI function: {} ({} lines)", longest.1, longest.0);
}

/// No function in the library or the binary is over 100 lines: one that
/// is holds parts that deserve names of their own.
#[test]
fn no_function_is_over_100_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let lengths = function_lengths(&files);
    assert!(
        lengths.len() > 500,
        "{} functions: the scan is broken",
        lengths.len()
    );
    let long: Vec<&(usize, String)> = lengths.iter().filter(|(n, _)| *n > 100).collect();
    assert!(long.is_empty(), "functions over 100 lines: {long:?}");
    let longest = lengths.last().expect("functions");
    assert!(
        longest.0 > 50,
        "the longest is {longest:?}: the scan is broken"
    );
}

/// The repository's text files, for the checks on what they cite: every
/// file under the checkout except build output, git's own, the device
/// tool's carried folders, binary data and logs (a run's output, kept as
/// it was printed).
fn repository_text_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if ![
                    ".git",
                    "target",
                    ".devbin",
                    ".gl",
                    "identify-results",
                    "out",
                ]
                .contains(&name.as_str())
                {
                    walk(&path, out);
                }
            } else if !name.ends_with(".log") && std::fs::read_to_string(&path).is_ok() {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(env!("CARGO_MANIFEST_DIR")), &mut files);
    files
}

/// The numbers of the sections `docs/model.md` defines ("## 4." gives "4",
/// "### 4.1" gives "4.1").
fn model_sections() -> BTreeSet<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/model.md"))
        .expect("docs/model.md defines the model");
    text.lines()
        .filter_map(|line| line.strip_prefix("## ").or(line.strip_prefix("### ")))
        .filter_map(|heading| heading.split_whitespace().next())
        .map(|number| number.trim_end_matches('.').to_string())
        .filter(|number| number.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect()
}

/// The model is defined in the repository: no file cites a specification a
/// clone does not contain, and every `docs/model.md §N` citation names a
/// section the page has.
#[test]
fn the_model_is_cited_from_the_repository() {
    let sections = model_sections();
    assert!(
        ["1", "2", "3", "4.1", "4.2", "5", "8", "9"]
            .iter()
            .all(|s| sections.contains(*s)),
        "docs/model.md's sections: {sections:?}"
    );
    let this_file = Path::new(env!("CARGO_MANIFEST_DIR")).join(file!());
    let mut stale = Vec::new();
    let mut citations = 0;
    for file in repository_text_files() {
        if file == this_file {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let cites_spec = line
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|word| word == "SPEC");
            if cites_spec {
                stale.push(format!("{}:{}: {line}", file.display(), number + 1));
            }
            for (at, _) in line.match_indices("docs/model.md §") {
                let rest = &line[at + "docs/model.md §".len()..];
                let section: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let section = section.trim_end_matches('.');
                if section.is_empty() {
                    // The form itself, `docs/model.md §N`.
                    continue;
                }
                citations += 1;
                if !sections.contains(section) {
                    stale.push(format!(
                        "{}:{}: cites docs/model.md §{section}, which it does not have",
                        file.display(),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        citations > 50,
        "only {citations} citations found: is the scan broken?"
    );
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

/// The engine runs every batch: no module above `engine` (and none beside
/// `gpu` below it) calls the GPU's batch runner itself, so a workflow
/// cannot run a GPU batch that the engine's choice, its step cache and its
/// scoring do not see.
/// Every Rust file under src/: its path from src/, and its text.
fn src_texts() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files
        .iter()
        .map(|file| {
            let relative = file.strip_prefix(&root).unwrap().to_string_lossy();
            (relative.to_string(), std::fs::read_to_string(file).unwrap())
        })
        .collect()
}

#[test]
fn only_the_engine_runs_gpu_batches() {
    let mut callers = Vec::new();
    let mut seen = 0;
    for (relative, text) in src_texts() {
        let calls = text.matches("run_batch(").count();
        seen += calls;
        let allowed = relative.starts_with("gpu/") || relative.starts_with("engine/");
        if calls > 0 && !allowed {
            callers.push(relative);
        }
    }
    assert!(seen > 0, "no call of run_batch found: the scan is broken");
    assert!(
        callers.is_empty(),
        "run_batch called outside engine/ and gpu/: {callers:?}"
    );
}

/// The grid's fixed axes are named in one table (`sweep::axis`, whose
/// columns are the tether's own keys in `model::params`): no other file
/// writes `"elements"`, `"damping_pa_s"` or `"drag_coefficient"` as a
/// string. The names of inputs are the exceptions, not columns: a clap
/// attribute's argument ids (the CLI struct's field names: in `#[arg(…)]`,
/// or a command's `mut_arg(…)` that rewords a shared flag's help), and
/// identify's and simulate's keyword tables (`workflow/*/keywords.rs`,
/// held to those flags by a test).
#[test]
fn the_grid_axes_are_named_in_one_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let names = ["\"elements\"", "\"damping_pa_s\"", "\"drag_coefficient\""];
    let (mut seen, mut elsewhere) = (0, Vec::new());
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let hits = names.iter().filter(|n| line.contains(*n)).count();
            seen += hits;
            let table = relative == "sweep/axis.rs"
                || relative == "model/params.rs"
                || (relative.starts_with("workflow/") && relative.ends_with("/keywords.rs"));
            let clap_id = ["#[arg(", "mut_arg("]
                .iter()
                .any(|p| line.trim_start().starts_with(p));
            if hits > 0 && !table && !clap_id {
                elsewhere.push(format!("{relative}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        seen >= 3,
        "the table's own names were not found: the scan is broken"
    );
    assert!(
        elsewhere.is_empty(),
        "axis names written outside sweep::axis:\n{}",
        elsewhere.join("\n")
    );
}

/// A file's module path under src/: `gpu/adaptive.rs` is `gpu::adaptive`,
/// `gpu/mod.rs` is `gpu`, `lib.rs` the crate root (empty).
fn module_path(relative: &str) -> Vec<String> {
    let trimmed = relative.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The paths a source text names from `crate::` or `super::`, use groups
/// expanded (`use super::{a, b::{c, d}}` names `super::a`, `super::b::c`,
/// `super::b::d`), each as its segments. A file's `#[cfg(test)] mod tests`
/// is left out: its `super` is the file itself.
fn named_paths(text: &str) -> Vec<Vec<String>> {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    // Tokens: identifiers, `::`, `{`, `}`, `,`; anything else ends a path.
    let mut tokens: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
            continue;
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".into());
            i += 1;
        } else if "{},*".contains(c) {
            tokens.push(c.to_string());
        } else if !c.is_whitespace() {
            tokens.push(" ".into());
        }
        i += 1;
    }
    // A path tree from `at`: prefix segments, then `::{…}` groups.
    fn tree(
        tokens: &[String],
        mut at: usize,
        prefix: Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) -> usize {
        let mut path = prefix;
        loop {
            match tokens.get(at).map(String::as_str) {
                Some("{") => {
                    at += 1;
                    loop {
                        if tokens.get(at).map(String::as_str) == Some("}") {
                            return at + 1;
                        }
                        at = tree(tokens, at, path.clone(), out);
                        match tokens.get(at).map(String::as_str) {
                            Some(",") => at += 1,
                            Some("}") => return at + 1,
                            _ => return at,
                        }
                    }
                }
                Some(t) if t.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                    path.push(t.to_string());
                    at += 1;
                    if tokens.get(at).map(String::as_str) == Some("::") {
                        at += 1;
                        continue;
                    }
                    if tokens.get(at).map(String::as_str) == Some("as") {
                        at += 2;
                    }
                    out.push(path);
                    return at;
                }
                _ => {
                    out.push(path);
                    return at;
                }
            }
        }
    }
    let mut paths = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let starts = (tokens[at] == "crate" || tokens[at] == "super")
            && tokens.get(at + 1).map(String::as_str) == Some("::")
            && (at == 0 || tokens[at - 1] != "::");
        if starts {
            at = tree(&tokens, at, Vec::new(), &mut paths).max(at + 1);
        } else {
            at += 1;
        }
    }
    paths
}

/// The module a path from the module `from` names: `super` and `crate`
/// resolved, then as deep as `modules` (the file modules) goes.
fn resolve(from: &[String], path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    let mut at: Vec<String> = from.to_vec();
    let mut rest = path;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "crate" => at.clear(),
            "super" => {
                at.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = tail;
    }
    for segment in rest {
        let mut deeper = at.clone();
        deeper.push(segment.clone());
        if !modules.contains(&deeper) {
            break;
        }
        at = deeper;
    }
    at
}

/// For every parent module, which of its children (files or folders) use
/// which others: an edge from the child holding the user to the child
/// holding what it names.
fn sibling_uses(
    texts: &[(String, String)],
) -> std::collections::BTreeMap<(Vec<String>, String), BTreeSet<String>> {
    let modules: BTreeSet<Vec<String>> = texts
        .iter()
        .filter(|(relative, _)| relative != "main.rs")
        .map(|(relative, _)| module_path(relative))
        .collect();
    let mut edges = std::collections::BTreeMap::<(Vec<String>, String), BTreeSet<String>>::new();
    for (relative, text) in texts {
        if relative == "main.rs" {
            continue;
        }
        let from = module_path(relative);
        // `super` in a mod.rs or lib.rs names the folder's parent.
        for path in named_paths(text) {
            let target = resolve(&from, &path, &modules);
            let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < target.len() {
                edges
                    .entry((from[..common].to_vec(), from[common].clone()))
                    .or_default()
                    .insert(target[common].clone());
            }
        }
    }
    edges
}

/// Sibling modules that reach each other through their uses, each circle
/// as `parent: a -> b -> a`.
fn import_circles(texts: &[(String, String)]) -> Vec<String> {
    let edges = sibling_uses(texts);
    let mut circles = BTreeSet::new();
    for (parent, start) in edges.keys() {
        // Depth-first from `start` within `parent`, looking for `start`.
        let mut stack = vec![vec![start.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(trail) = stack.pop() {
            let last = trail.last().unwrap();
            for next in edges
                .get(&(parent.clone(), last.clone()))
                .into_iter()
                .flatten()
            {
                if next == start {
                    let mut circle = trail.clone();
                    // One name per circle: its rotation from the least member.
                    let least = (0..circle.len()).min_by_key(|&i| &circle[i]).unwrap();
                    circle.rotate_left(least);
                    let first = circle[0].clone();
                    circle.push(first);
                    circles.insert(format!("{}: {}", parent.join("::"), circle.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push(longer);
                }
            }
        }
    }
    circles.into_iter().collect()
}

#[test]
fn the_import_scan_resolves_groups_super_and_folders() {
    let texts = vec![
        (
            "gpu/mod.rs".to_string(),
            "pub mod a; pub mod b; pub mod m;".to_string(),
        ),
        (
            "gpu/a.rs".to_string(),
            "use super::{b::X, m::y::{Z, W}};".to_string(),
        ),
        (
            "gpu/b.rs".to_string(),
            "fn f() { crate::gpu::m::y::g() }".to_string(),
        ),
        ("gpu/m/mod.rs".to_string(), String::new()),
        (
            "gpu/m/y.rs".to_string(),
            "use super::super::a::Q;".to_string(),
        ),
        (
            "io.rs".to_string(),
            "use crate::gpu::b;\n#[cfg(test)]\nmod tests { use super::super::gpu::a; }".to_string(),
        ),
    ];
    let edges = sibling_uses(&texts);
    let of = |parent: &[&str], child: &str| -> Vec<String> {
        let key = (
            parent.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            child.to_string(),
        );
        edges
            .get(&key)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(of(&["gpu"], "a"), ["b", "m"]);
    assert_eq!(of(&["gpu"], "b"), ["m"]);
    assert_eq!(of(&["gpu"], "m"), ["a"]);
    assert_eq!(of(&[], "io"), ["gpu"]);
    assert_eq!(
        import_circles(&texts),
        ["gpu: a -> b -> m -> a", "gpu: a -> m -> a"]
    );
}

/// No two modules anywhere in src/ (the CLI's and the GPU engine's
/// included) use each other, directly or round a longer circle: each
/// folder's files have an order a reader can follow.
#[test]
fn no_import_circle_anywhere() {
    let texts = src_texts();
    let edges = sibling_uses(&texts);
    let uses: usize = edges.values().map(BTreeSet::len).sum();
    assert!(
        uses > 150,
        "only {uses} uses between modules: is the scan broken?"
    );
    let circles = import_circles(&texts);
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// Every function of every WGSL file, with its length in lines: from its
/// `fn` line to the closing brace at that line's indentation.
fn wgsl_function_lengths() -> Vec<(usize, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            files.push(path);
        }
    }
    function_lengths(&files)
}

/// No WGSL function over 150 lines: an entry point calls named functions
/// for its phases.
#[test]
fn no_wgsl_function_is_over_150_lines() {
    let lengths = wgsl_function_lengths();
    assert!(
        lengths.len() > 30,
        "{} WGSL functions: the scan is broken",
        lengths.len()
    );
    let longest = lengths.last().unwrap();
    assert!(
        longest.0 > 40,
        "the longest is {longest:?}: the scan is broken"
    );
    let long: Vec<_> = lengths.iter().filter(|(n, _)| *n > 150).collect();
    assert!(long.is_empty(), "WGSL functions over 150 lines: {long:?}");
}

/// Every type, enum, alias and trait the library and the binary declare
/// (outside test modules), with the file that declares it.
fn declared_types() -> Vec<(String, String)> {
    let mut declared = Vec::new();
    for (relative, text) in src_texts() {
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(at) => &text[..at],
            None => &text[..],
        };
        for line in text.lines() {
            let mut words = line.split_whitespace().skip_while(|w| w.starts_with("pub"));
            let (Some(kind), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            if !["struct", "enum", "type", "trait"].contains(&kind) {
                continue;
            }
            // An impl's `type Error = …;` fills a trait's slot: no new type.
            if kind == "type" && line.starts_with(char::is_whitespace) {
                continue;
            }
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.chars().next().is_some_and(|c| c.is_uppercase()) {
                declared.push((name, relative.clone()));
            }
        }
    }
    declared
}

/// One name per concept: no two modules declare a type of the same name,
/// so a name in a message, a doc or a review means one thing.
#[test]
fn every_type_name_is_declared_once() {
    let declared = declared_types();
    assert!(
        declared.len() > 300,
        "{} types: the scan is broken",
        declared.len()
    );
    let mut by_name = std::collections::BTreeMap::<&str, Vec<&str>>::new();
    for (name, file) in &declared {
        by_name.entry(name).or_default().push(file);
    }
    let twice: Vec<String> = by_name
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| format!("{name}: {}", files.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "type names declared more than once:\n{}",
        twice.join("\n")
    );
}

/// The CLI maps flags onto the library and prints what it writes
/// (`text`): 2,000 lines at most in all; identification is one path,
/// the folder `workflow/identify/`, a file a job.
#[test]
fn the_cli_stays_thin_and_identification_is_one_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/cli"), &mut files);
    files.push(root.join("src/cli.rs"));
    let lines = |path: &Path| std::fs::read_to_string(path).unwrap().lines().count();
    let cli: usize = files.iter().map(|f| lines(f)).sum();
    assert!(cli > 500, "the scan is broken: {cli} lines");
    assert!(
        cli <= 2000,
        "cli/ is {cli} lines: move what is not flags into the library"
    );
    // One job a file: the identification's folder holds its request,
    // checks, engine choice, sweep, shards, finishing and merging, none
    // over about 600 lines; no file of the library over 1,200.
    let mut identify = Vec::new();
    rust_files(&root.join("src/workflow/identify"), &mut identify);
    assert!(identify.len() >= 8, "the scan is broken: {identify:?}");
    for f in &identify {
        let n = lines(f);
        assert!(n <= 650, "{} is {n} lines: split it by job", f.display());
    }
    assert!(
        !root.join("src/workflow/identify.rs").exists(),
        "identification in one file again"
    );
    let mut library = Vec::new();
    rust_files(&root.join("src"), &mut library);
    for f in &library {
        let n = lines(f);
        assert!(n <= 1200, "{} is {n} lines: split it", f.display());
    }
    assert!(
        !root.join("src/workflow/joint.rs").exists(),
        "a second identification path"
    );
}
