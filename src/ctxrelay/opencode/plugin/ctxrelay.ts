// ctxrelay's OpenCode plugin (OpenCode 1.18.33): it decides nothing. For each event in
// EVENTS it runs HOOK with the event's name, the payload as JSON on stdin, and executes
// the JSON answer the hook prints: {deny, context, notice, prompt, fresh}. The wire is
// ctxrelay.opencode._payloads; `ctxrelay opencode install` writes HOOK and EVENTS.
// It imports no package (OpenCode would npm-install one at start), and it fails open:
// no hook, a crash, a timeout or bad JSON lets the session go on, with one log line.

import { spawn } from "node:child_process"
import { appendFileSync } from "node:fs"

const HOOK: string[] = /* ctxrelay:hook */ []
const EVENTS: string[] = /* ctxrelay:events */ []
const TIMEOUT_MS = 10000
const MODE = process.argv[2] // bun, the bundle, then OpenCode's command (none: the UI)
const UI = MODE === "run" || MODE === "serve" ? MODE : "tui"

export const CtxrelayPlugin = async ({ client, directory, worktree }: any) => {
  // `ctxrelay opencode doctor` names a file here: each copy that loaded says so in it
  const told = process.env.CTXRELAY_OPENCODE_DOCTOR
  try {
    if (told) appendFileSync(told, JSON.stringify({ hook: HOOK, events: EVENTS, file: import.meta.url }) + "\n")
  } catch {} // doctor then says the copy did not load; OpenCode goes on
  const models = new Map<string, any>() // session → the model of its last LLM call
  const steps = new Map<string, any>() // session → its newest finished step
  const sent = new Set<string>() // assistant messages already forwarded as step.finished
  const notes = new Map<string, string[]>() // session → context waiting for a place

  const warn = (text: string) => {
    const line = `ctxrelay opencode plugin: ${text}`
    if (UI === "run") process.stderr.write(line + "\n")
    client.app.log({ body: { service: "ctxrelay", level: "warn", message: line } }).catch(() => {})
  }

  // One command: the answer, or null (fail open).
  const hook = (event: string, fields: any): Promise<any> => {
    if (!EVENTS.includes(event) || HOOK.length === 0) return Promise.resolve(null)
    const session = fields.session_id
    const payload = { hook_event_name: event, directory, worktree, ui: UI, ...fields }
    if (models.has(session)) payload.model = models.get(session)
    if (steps.has(session) && !payload.step) payload.step = steps.get(session)
    return new Promise((resolve) => {
      let out = ""
      let err = ""
      let settled = false
      const done = (answer: any, problem?: string) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (problem) warn(`${event} ignored (${problem})`)
        resolve(answer)
      }
      const child = spawn(HOOK[0], [...HOOK.slice(1), event], { stdio: ["pipe", "pipe", "pipe"] })
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        done(null, `no answer in ${TIMEOUT_MS} ms`)
      }, TIMEOUT_MS)
      child.on("error", (e: Error) => done(null, e.message))
      child.stdout.on("data", (d: Buffer) => (out += d))
      child.stderr.on("data", (d: Buffer) => (err += d))
      child.on("close", (code: number) => {
        const said = err.trim().split("\n").pop() ?? ""
        if (code !== 0) return done(null, `the hook exited ${code}${said ? `: ${said}` : ""}`)
        if (said) warn(said) // the hook failed open itself and said why
        try {
          const answer = out.trim() ? JSON.parse(out) : null
          done(answer && typeof answer === "object" ? answer : null)
        } catch {
          done(null, "its answer is not JSON")
        }
      })
      child.stdin.on("error", () => {}) // a hook that exits before reading: close says it
      child.stdin.end(JSON.stringify(payload))
    })
  }

  const text = (parts: any[]) =>
    parts.filter((p) => p?.type === "text" && typeof p.text === "string").map((p) => p.text)

  // The answer's parts that need no hook of their own: context is kept for the session's
  // next tool result or user message, notice shown, prompt sent.
  const execute = async (session: string, answer: any) => {
    if (!answer) return
    try {
      if (typeof answer.context === "string") notes.set(session, [...(notes.get(session) ?? []), answer.context])
      if (typeof answer.notice === "string") {
        if (UI === "run") process.stderr.write(answer.notice + "\n")
        else await client.tui.showToast({ body: { message: answer.notice, variant: "info" } })
      }
      if (typeof answer.prompt !== "string") return
      const parts = [{ type: "text", text: answer.prompt }]
      if (!answer.fresh) {
        await client.session.promptAsync({ path: { id: session }, body: { parts } })
        return
      }
      const made = await client.session.create({ body: { title: `ctxrelay handoff from ${session}` } })
      const fresh = made.data.id
      if (UI === "tui") await client.tui.publish({ body: { type: "tui.session.select", properties: { sessionID: fresh } } })
      await execute(fresh, await hook("fresh.started", { session_id: fresh, from_session_id: session }))
      // `opencode run` exits when its own session goes idle: there the fresh session's
      // turn runs to its end before the hook that asked for it returns
      const request = { path: { id: fresh }, body: { parts } }
      if (UI === "run") process.stderr.write(`ctxrelay: the work continues in session ${fresh}\n`)
      await (UI === "run" ? client.session.prompt(request) : client.session.promptAsync(request))
    } catch (e: any) {
      warn(`an answer was not carried out (${e?.message ?? e})`)
    }
  }
  const take = (session: string) => {
    const waiting = notes.get(session) ?? []
    notes.delete(session)
    return waiting.join("\n\n")
  }

  return {
    "chat.params": async (input: any) => {
      if (input.agent === "title") return
      const limit = input.model?.limit ?? {}
      models.set(input.sessionID, {
        provider_id: input.model?.providerID ?? input.provider?.info?.id ?? "",
        model_id: input.model?.id ?? "",
        ...(limit.context ? { context_limit: limit.context } : {}),
        ...(limit.output ? { output_limit: limit.output } : {}),
      })
    },
    "tool.execute.before": async (input: any, output: any) => {
      const call = { session_id: input.sessionID, tool: input.tool, call_id: input.callID, args: output.args ?? {} }
      const answer = await hook("tool.execute.before", call)
      if (typeof answer?.deny === "string") {
        await execute(input.sessionID, { ...answer, deny: undefined })
        throw new Error(answer.deny) // the tool does not run; the model gets this text
      }
      await execute(input.sessionID, answer)
    },
    "tool.execute.after": async (input: any, output: any) => {
      const result = typeof output.output === "string" ? output.output : ""
      const call = { session_id: input.sessionID, tool: input.tool, call_id: input.callID, args: input.args ?? {} }
      await execute(input.sessionID, await hook("tool.execute.after", { ...call, output_length: result.length }))
      const note = take(input.sessionID)
      if (note && typeof output.output === "string") output.output = `${output.output}\n\n${note}`
      else if (note) notes.set(input.sessionID, [note])
    },
    "chat.message": async (input: any, output: any) => {
      const m = output.message ?? {}
      const prompt = text(output.parts ?? []).join("\n")
      const fields = { session_id: input.sessionID, message_id: m.id ?? "", agent: m.agent ?? "", prompt }
      await execute(input.sessionID, await hook("chat.message", fields))
      const note = take(input.sessionID)
      // a part needs an id of its own: the first part's, extended, sorts after it
      const first = output.parts?.[0]
      if (note && first) {
        const part = { id: `${first.id}ctxrelay`, sessionID: first.sessionID, messageID: first.messageID }
        output.parts.push({ ...part, type: "text", text: note, synthetic: true })
      } else if (note) notes.set(input.sessionID, [note])
    },
    event: async ({ event }: any) => {
      const p = event.properties ?? {}
      if (event.type === "message.updated" && p.info?.role === "assistant" && p.info.time?.completed) {
        const m = p.info
        const step = { message_id: m.id, model_id: m.modelID, tokens: m.tokens, cost: m.cost, finish: m.finish, summary: m.summary === true }
        steps.set(m.sessionID, step)
        if (sent.has(m.id)) return
        sent.add(m.id)
        await execute(m.sessionID, await hook("step.finished", { session_id: m.sessionID, step }))
      } else if (event.type === "session.idle" || event.type === "session.compacted") {
        await execute(p.sessionID, await hook(event.type, { session_id: p.sessionID }))
      } else if (event.type === "session.created") {
        const s = p.info ?? {}
        const fields = { session_id: s.id, title: s.title ?? "", ...(s.parentID ? { parent_id: s.parentID } : {}) }
        await execute(s.id, await hook("session.created", fields))
      }
    },
  }
}
