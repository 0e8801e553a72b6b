//! A library message in the words of the door it goes out through.
//!
//! The library's messages name a job's inputs as the command line writes
//! them (`--resume`, `--backend cpu`), deep in layers that cannot know the
//! door (a lock file, the GPU's limits, a sweep's checkpoint). The Python
//! package's user never typed a flag: [`Door::words`] rewrites each flag
//! that is one of a job's keywords (every `KEYWORDS` table) into the
//! keyword as that user writes it, with its value where the message gives
//! one. Anything else with dashes (Slurm's `--array=`) stays as written.

use crate::workflow::keywords::{Door, Keyword, KeywordKind};

/// Every job's keywords, the tables both doors take their words from.
fn every_table() -> [&'static [Keyword]; 7] {
    [
        crate::workflow::identify::KEYWORDS,
        crate::workflow::simulate::KEYWORDS,
        crate::workflow::design::KEYWORDS,
        crate::workflow::summarize::KEYWORDS,
        crate::workflow::linearize::KEYWORDS,
        crate::workflow::swingup::KEYWORDS,
        crate::workflow::synth::KEYWORDS,
    ]
}

fn keyword(name: &str) -> Option<&'static Keyword> {
    every_table().into_iter().flatten().find(|k| k.name == name)
}

impl Door {
    /// `message` (the library's, naming inputs by their flags) as this
    /// door's user would have written the inputs: unchanged for the
    /// command line; for Python `--resume` → `resume=True`, `--backend
    /// cpu` → `backend="cpu"`, `--tolerance 1e-7` → `tolerance=1e-7`,
    /// `--measured FILE` → `measured=FILE`, `--out` → `out`.
    pub fn words(self, message: &str) -> String {
        if self == Door::CommandLine {
            return message.to_string();
        }
        let mut said = String::with_capacity(message.len());
        let mut rest = message;
        while let Some(at) = rest.find("--") {
            let (before, flag) = rest.split_at(at);
            said.push_str(before);
            let name_len = flag[2..]
                .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
                .unwrap_or(flag.len() - 2);
            let name = flag[2..2 + name_len].trim_end_matches('-');
            let after = &flag[2 + name.len()..];
            // `a--b`, `---`, `/tmp/--out`, `--array=…`: not a flag of ours.
            let inside_word = (said.chars().last())
                .is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '/' | '\\' | '.' | '_'));
            let found =
                (!inside_word && !after.starts_with('=')).then(|| keyword(&name.replace('-', "_")));
            let Some(Some(keyword)) = found else {
                said.push_str("--");
                rest = &flag[2..];
                continue;
            };
            let (written, used) = written(keyword, after);
            said.push_str(&written);
            rest = &after[used..];
        }
        said.push_str(rest);
        said
    }
}

/// `keyword` as Python writes it, given the text `after` its flag, and how
/// many bytes of `after` were its value.
fn written(keyword: &Keyword, after: &str) -> (String, usize) {
    let name = keyword.name;
    if matches!(
        keyword.kind,
        KeywordKind::Switch | KeywordKind::SwitchOrTable
    ) {
        return (format!("{name}=True"), 0);
    }
    let Some(token) = after.strip_prefix(' ').map(value_token) else {
        return (name.to_string(), 0);
    };
    let used = 1 + token.len();
    let is_number = token.parse::<f64>().is_ok();
    let is_placeholder = token.chars().any(|c| c.is_ascii_uppercase())
        && token
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_:/.".contains(c));
    if is_number
        || is_placeholder
        || (token.starts_with('"') && token.ends_with('"') && token.len() > 1)
    {
        (format!("{name}={token}"), used)
    } else if keyword.choices().contains(&token) || token.contains('=') {
        (format!("{name}=\"{token}\""), used)
    } else {
        (name.to_string(), 0)
    }
}

/// The word that follows a flag, without the punctuation of the sentence
/// around it (`cpu)`, `f64,`, `FILE.`).
fn value_token(text: &str) -> &str {
    let word = &text[..text.find(char::is_whitespace).unwrap_or(text.len())];
    word.trim_end_matches([',', ';', ')', ']', '`'])
        .trim_end_matches(['.', ':'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(message: &str) -> String {
        Door::Python.words(message)
    }

    #[test]
    fn flags_become_python_keywords_with_their_values() {
        let cases = [
            (
                "x exists: choose another --out or pass --force to replace it",
                "x exists: choose another out or pass force=True to replace it",
            ),
            (
                "saved in d; run the same command with --resume to finish",
                "saved in d; run the same command with resume=True to finish",
            ),
            (
                "(use --backend cpu for more)",
                "(use backend=\"cpu\" for more)",
            ),
            (
                "cannot run there (use --precision f32 or --backend cpu)",
                "cannot run there (use precision=\"f32\" or backend=\"cpu\")",
            ),
            (
                "use --gpu-layout thread, fewer",
                "use gpu_layout=\"thread\", fewer",
            ),
            (
                "accuracy: --tolerance 1e-7 m for",
                "accuracy: tolerance=1e-7 m for",
            ),
            ("(pass --measured FILE if", "(pass measured=FILE if"),
            (
                "or --axis shallow.release_time_s=…, to say",
                "or axis=\"shallow.release_time_s=…\", to say",
            ),
            (
                "(--axis release_time_s=START:STOP:STEP)",
                "(axis=\"release_time_s=START:STOP:STEP\")",
            ),
            ("[camera] of --config, docs", "[camera] of config, docs"),
            (
                "--allow-implausible accepts them",
                "allow_implausible=True accepts them",
            ),
            (
                "no GPU adapter matches --adapter \"nv\"; available",
                "no GPU adapter matches adapter=\"nv\"; available",
            ),
            (
                "on the bound of [--period-min, --period-max] =",
                "on the bound of [period_min, period_max] =",
            ),
            (
                "add finer n to the grid (--elements) to see",
                "add finer n to the grid (elements) to see",
            ),
        ];
        for (library, expected) in cases {
            assert_eq!(python(library), expected, "{library}");
        }
    }

    #[test]
    fn what_is_not_a_keyword_stays_as_written() {
        for message in [
            "one job per shard: --array=1-4",
            "an em dash -- in prose, and a--b",
            "--no-such-flag here",
            "ends with --",
            "wrote /tmp/--out/results.parquet",
        ] {
            assert_eq!(python(message), message);
        }
        let line = "use --backend cpu for more";
        assert_eq!(Door::CommandLine.words(line), line);
    }
}
