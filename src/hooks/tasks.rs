//! Claude Code's task list as a plan: the older `TodoWrite` tool (the whole list each time) and
//! the current `TaskCreate` / `TaskUpdate` tools (one task at a time, ids assigned by Claude Code
//! and reported in the tool result). `TaskList` / `TaskGet` / `TaskStop` only read or stop.

use serde_json::Value;

/// Tools that only manage the task list (never plan steps of their own).
pub const TASK_TOOLS: [&str; 6] = ["TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TaskStop"];

#[derive(Debug, Clone)]
struct Task {
    id: Option<String>,
    subject: String,
    status: String,
    created_by: Option<String>,
}

/// The task list of one turn, built from the transcript's tool calls and results.
#[derive(Debug, Default, Clone)]
pub struct TaskList {
    tasks: Vec<Task>,
}

impl TaskList {
    /// Applies a task tool call (`name`, `input`, the tool_use block's `id`).
    pub fn call(&mut self, name: &str, input: &Value, use_id: Option<&str>) {
        let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
        match name {
            "TodoWrite" => {
                let todos = input.get("todos").and_then(Value::as_array).cloned().unwrap_or_default();
                self.tasks = todos
                    .iter()
                    .filter_map(|t| {
                        Some(Task {
                            id: None,
                            subject: t.get("content")?.as_str()?.to_string(),
                            status: t.get("status").and_then(Value::as_str).unwrap_or("pending").to_string(),
                            created_by: None,
                        })
                    })
                    .collect();
            }
            "TaskCreate" => {
                let Some(subject) = text("subject").or_else(|| text("description")) else { return };
                let id = Some((self.tasks.len() + 1).to_string());
                let created_by = use_id.map(str::to_string);
                self.tasks.push(Task { id, subject, status: "pending".into(), created_by });
            }
            "TaskUpdate" => {
                let Some(id) = text("taskId") else { return };
                let Some(i) = self.tasks.iter().position(|t| t.id.as_deref() == Some(id.as_str())) else { return };
                if let Some(subject) = text("subject") {
                    self.tasks[i].subject = subject;
                }
                match text("status").as_deref() {
                    Some("deleted") => {
                        self.tasks.remove(i);
                    }
                    Some(status) => self.tasks[i].status = status.to_string(),
                    None => {}
                }
            }
            _ => {}
        }
    }

    /// Reads the id Claude Code assigned to a created task from a transcript entry's
    /// `toolUseResult.task.id` and the tool_result block naming the creating call.
    pub fn result(&mut self, entry: &Value) {
        let Some(id) = entry.pointer("/toolUseResult/task/id").and_then(Value::as_str) else { return };
        let blocks = entry.pointer("/message/content").and_then(Value::as_array).cloned().unwrap_or_default();
        for b in blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")) {
            let Some(use_id) = b.get("tool_use_id").and_then(Value::as_str) else { continue };
            if let Some(t) = self.tasks.iter_mut().find(|t| t.created_by.as_deref() == Some(use_id)) {
                t.id = Some(id.to_string());
            }
        }
    }

    /// The subjects, in order.
    pub fn steps(&self) -> Vec<String> {
        self.tasks.iter().map(|t| t.subject.clone()).collect()
    }

    /// True when every task is completed (an empty list counts as done).
    pub fn done(&self) -> bool {
        self.tasks.iter().all(|t| t.status == "completed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn created_tasks_take_the_ids_claude_code_reports_and_finish_when_all_complete() {
        let mut l = TaskList::default();
        l.call("TaskCreate", &json!({"subject": "read notes", "description": "d"}), Some("u1"));
        l.call("TaskCreate", &json!({"subject": "fix typo", "description": "d"}), Some("u2"));
        // Claude Code numbered them 7 and 8 (tasks from earlier turns exist).
        for (id, use_id) in [("7", "u1"), ("8", "u2")] {
            l.result(&json!({"toolUseResult": {"task": {"id": id}},
                "message": {"content": [{"type": "tool_result", "tool_use_id": use_id}]}}));
        }
        l.call("TaskUpdate", &json!({"taskId": "7", "status": "completed"}), None);
        assert!(!l.done());
        l.call("TaskUpdate", &json!({"taskId": "8", "status": "completed", "subject": "fix the typo"}), None);
        assert!(l.done());
        assert_eq!(l.steps(), vec!["read notes", "fix the typo"]);
        l.call("TaskCreate", &json!({"subject": "extra"}), Some("u3"));
        l.call("TaskUpdate", &json!({"taskId": "3", "status": "deleted"}), None);
        assert!(l.done(), "a deleted task does not hold the plan open");
    }

    #[test]
    fn todo_write_replaces_the_whole_list() {
        let mut l = TaskList::default();
        l.call(
            "TodoWrite",
            &json!({"todos": [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}]}),
            None,
        );
        assert_eq!((l.steps(), l.done()), (vec!["a".to_string(), "b".to_string()], false));
    }
}
