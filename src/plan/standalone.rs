//! Whether a task says what to do on its own. A prompt such as "yes", "1", "push", "resume" or
//! "you run it" answers the conversation it was typed into: the same words in another session ask
//! for something else. A plan stored from such a turn is that conversation's work, and serving it
//! as a hit for the same words elsewhere would tell the agent something false. So no plan is
//! stored for such a task, and a lookup for one serves and suggests nothing.
//!
//! The rule is narrow on purpose, so that terse real tasks ("make clean", "kill 4312", "which
//! branch am I on?", "whoami") still stand: a task is a reply when, with replies, fillers and bare
//! numbers set aside, nothing is left; or only one action with nothing to act on ("push",
//! "verify", "you run it"); or it is a lone path or file name ("helium.desktop"). Text in scripts
//! written without spaces counts by its characters.

use super::lexicon;

/// Words that answer or steer a conversation rather than say what to do.
const CONVERSATIONAL: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "no",
    "nope",
    "nah",
    "ok",
    "okay",
    "k",
    "sure",
    "thanks",
    "thank",
    "thx",
    "ty",
    "go",
    "ahead",
    "continue",
    "proceed",
    "resume",
    "retry",
    "again",
    "hi",
    "hello",
    "hey",
    "done",
    "right",
    "correct",
    "good",
    "great",
    "fine",
    "agree",
    "cool",
    "nice",
    "perfect",
    "exactly",
    "try",
    "do",
    "does",
    "did",
    "same",
    "above",
    "previous",
    "one",
    "option",
    "both",
    "neither",
    "first",
    "second",
    "third",
    "last",
    "next",
    "what",
    "why",
    "who",
    "whats",
    "what's",
    "is",
    "are",
    "was",
    "were",
    "am",
    "not",
    "don't",
    "dont",
    "didn't",
    "didnt",
    "doesn't",
    "doesnt",
    "see",
    "think",
    "mean",
    "look",
    "looks",
    "those",
    "these",
    "them",
    "they",
    "here",
    "wait",
    "stop",
    "keep",
    "going",
    "well",
    "hmm",
    "about",
    "thing",
    "things",
    "stuff",
    "one's",
    "ones",
    "instead",
    "still",
    "more",
    "less",
    "too",
    "very",
    "really",
    "actually",
    "maybe",
    "already",
    "yet",
    "it's",
    "that's",
    "i'm",
    "im",
    "ill",
    "i'll",
    "you're",
    "youre",
    "whatever",
    "anything",
    "something",
    "everything",
    "lgtm",
];

/// Actions that act on whatever the conversation was about, beyond the lexicon's verbs.
const ACTIONS: &[&str] = &[
    "commit", "push", "pull", "merge", "rebase", "deploy", "verify", "check", "test", "run", "build", "undo", "revert",
    "apply", "open", "login", "save", "ship", "release", "finish", "start", "restart", "show", "explain", "review",
];

/// Why a task does not stand on its own, or `None` when it does.
pub fn refusal(task: &str) -> Option<String> {
    if stands_alone(task) {
        return None;
    }
    let shown: String = task.trim().chars().take(60).collect();
    Some(format!(
        "the task \"{shown}\" does not say what to do on its own: it answers the conversation it was typed in, so no stored plan is served, suggested or stored for it; ask or store the task as someone would from scratch, naming what to act on (e.g. \"add the serde dependency to Cargo.toml\")"
    ))
}

/// True unless the task is only a reply: nothing but replies, fillers and numbers; one action
/// with no object ("push", "you run it"); or a lone path or file name.
pub fn stands_alone(task: &str) -> bool {
    let tokens: Vec<String> = task
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '!' | '?' | '(' | ')' | '"' | '`'))
        .map(|raw| raw.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '*' | '[' | ']' | '{' | '}' | '<' | '>')))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let (mut things, mut actions, mut numbers) = (0usize, 0usize, 0usize);
    for (i, word) in tokens.iter().enumerate() {
        // Scripts written without spaces: every two characters are a word, all of them things.
        let unspaced = word.chars().filter(|c| is_unspaced(*c)).count();
        if unspaced > 0 {
            things += unspaced.div_ceil(2);
            continue;
        }
        if !word.chars().any(char::is_alphabetic) {
            // A bare number answers a numbered question, or is what an action acts on ("kill
            // 4312"); digits joined by `.`, `:`, `/` or `-` are a value (a version, a date).
            if word.chars().any(|c| matches!(c, '.' | ':' | '/' | '-')) && word.chars().any(|c| c.is_ascii_digit()) {
                things += 1;
            } else if word.chars().any(|c| c.is_ascii_digit()) {
                numbers += 1;
            }
            continue;
        }
        let value = word.chars().any(|c| !c.is_alphabetic() && c != '\'');
        // "go" is the language or its command, but for "go ahead" / "go on".
        let replying_go = word == "go" && tokens.get(i + 1).is_none_or(|n| matches!(n.as_str(), "ahead" | "on"));
        if !value && (replying_go || (word != "go" && is_filler(word))) {
            continue;
        }
        if !value && (lexicon::verb(word).is_some() || ACTIONS.contains(&word.as_str())) {
            actions += 1;
        } else {
            things += 1;
        }
    }
    if things + actions == 0 {
        return false;
    }
    if things == 0 && actions == 1 && numbers == 0 {
        return false;
    }
    // A path or a file name alone points at something the conversation was about.
    let lone_path = tokens.len() == 1
        && (tokens[0].contains(['/', '\\'])
            || tokens[0]
                .rsplit_once('.')
                .is_some_and(|(a, e)| !a.is_empty() && e.chars().all(char::is_alphabetic) && !e.is_empty()));
    !lone_path
}

/// A word that replies or fills rather than names anything ("yes", "please", "it").
fn is_filler(word: &str) -> bool {
    word.chars().count() < 2 || CONVERSATIONAL.contains(&word) || (word != "make" && lexicon::STOPWORDS.contains(&word))
}

/// Characters of scripts written without spaces between words (CJK, Thai, Lao, Khmer, Myanmar).
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x3040..=0x30FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_to_the_conversation_do_not_stand_alone() {
        // Prompts that real sessions repeat, each meaning something else every time.
        for t in [
            "yes",
            "1",
            "3.",
            "6",
            "resume",
            "verify",
            "you run it",
            "push",
            "commit",
            "hi",
            "continue",
            "do it",
            "go ahead",
            "try again",
            "I dont see it?",
            "update your about",
            "helium.desktop",
            "\\documents\\M-Claude",
            "ok, do that",
            "option 2",
            "fix it",
            "yes please",
        ] {
            assert!(!stands_alone(t), "{t:?} answers a conversation");
            assert!(refusal(t).is_some_and(|r| r.contains("from scratch")), "{t:?}");
        }
    }

    #[test]
    fn tasks_that_name_what_to_act_on_stand_alone() {
        for t in [
            "add the serde dependency to Cargo.toml",
            "install usage4claude",
            "ssh into slate-ssh.thisness.us",
            "run the tests",
            "bump the version to 1.2.3",
            "rename parse_config to load_config",
            "find files larger than 10M",
            "login to git",
            "install gh (CLI)",
            "把这个函数重命名",
            "fix the failing test in src/lib.rs",
            "what does E0308 mean?",
            "what needs libssl3?",
            "kill 4312",
            "make clean",
            "go test",
            "which branch am I on?",
            "Unstage everything",
            "whoami",
            "ssh-keygen",
            "Bump go from 1.21 to 1.22",
            "upgrade to 3.12",
        ] {
            assert!(stands_alone(t), "{t:?} says what to do");
            assert!(refusal(t).is_none());
        }
    }
}
