//! The crate's rooms and the one direction imports may run between them: each module of
//! `src/` may use only modules of a lower layer (or its own room). An import up the layers, and
//! so any import circle between rooms, fails this test with the file and the path it names.
//!
//! Layers, lowest first (the same order `src/lib.rs` describes):
//! 0. `error`: the one error type;
//! 1. `model`: the domain types, which hold only valid values;
//! 2. `files`, `telemetry`, `aws`, `auth`: file formats, logs and metrics, the SDK's set-up,
//!    token verification — each on the model alone;
//! 3. `store` (DynamoDB), `blob` (S3), `queue` (SQS), `bus` (EventBridge): the adapters;
//! 4. `config`: what a function reads from its environment;
//! 5. `dialing`: the engine, on the adapters;
//! 6. `service`: one function per operation;
//! 7. `app`: the composition root, which builds all of the above once;
//! 8. `http`, `worker`: the entry points, the routers and the queue and schedule handlers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("model", 1),
    ("files", 2),
    ("telemetry", 2),
    ("aws", 2),
    ("auth", 2),
    ("store", 3),
    ("blob", 3),
    ("queue", 3),
    ("bus", 3),
    ("config", 4),
    ("dialing", 5),
    ("service", 6),
    ("app", 7),
    ("http", 8),
    ("worker", 8),
];

fn layer(room: &str) -> Option<u8> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == room)
        .map(|(_, layer)| *layer)
}

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The room a file belongs to: its first path component under `src/` (`store/task.rs` is in
/// `store`, `queue.rs` in `queue`).
fn room_of(relative: &Path) -> String {
    let first = relative.components().next().expect("a path under src/");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

/// The rooms a piece of code names through `crate::room` or `crate::{room, ...}`.
fn rooms_named(code: &str) -> BTreeSet<String> {
    let mut rooms = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_ident = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        rooms.insert(name);
                    }
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else if depth == 1 {
                    item.push(c);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            rooms.insert(name);
        }
    }
    rooms
}

/// The file without its comments (doc links may point anywhere).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn imports_run_only_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src/");
        if relative == Path::new("lib.rs") {
            continue;
        }
        let room = room_of(relative);
        let own = layer(&room).unwrap_or_else(|| {
            panic!(
                "src/{} is in room `{room}`, which has no layer: add it to LAYERS and to lib.rs",
                relative.display()
            )
        });
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for named in rooms_named(&code_of(&text)) {
            if named == room || named == "Error" || named == "Result" {
                continue;
            }
            let Some(theirs) = layer(&named) else {
                wrong.push(format!(
                    "src/{} names crate::{named}, which has no layer",
                    relative.display()
                ));
                continue;
            };
            if theirs >= own {
                wrong.push(format!(
                    "src/{} ({room}, layer {own}) imports crate::{named} (layer {theirs})",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports up or across the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_reads_grouped_and_nested_imports() {
    let code = "use crate::{model::{Id, Tenant}, store::Store};\nlet x = crate::queue::decode(b);\nmacro_crate::ignored";
    let named: Vec<_> = rooms_named(code).into_iter().collect();
    assert_eq!(named, ["model", "queue", "store"]);
    assert_eq!(
        code_of("use a; // crate::http\n/// [`crate::app`]"),
        "use a; \n"
    );
}
