// The Rust read paths the Node benchmark compares with, run in turn with
// the Node runs on the same server and tables: a child process of the
// `node_reference` example (hyperdb-api/benches/node_reference.rs), one
// request a line on its stdin, one answer a line on its stdout.

import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

export class RustReference {
  #child
  #lines
  #stderr = ''

  /** Starts `binary` against `database` on the server `server` names ({ endpoint, password }). */
  constructor(binary, server, database) {
    this.#child = spawn(binary, [server.endpoint, database], {
      env: { ...process.env, HYPER_PASSWORD: server.password ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    this.#child.stderr.on('data', (d) => {
      this.#stderr += d
    })
    this.#lines = createInterface({ input: this.#child.stdout })[Symbol.asyncIterator]()
  }

  /**
   * Runs `path` (`query_arrow` or `execute_query`) of each statement in
   * `sqls` at once, one connection each; returns { seconds, rows, sum }.
   */
  async read(path, sqls) {
    this.#child.stdin.write(`${[path, ...sqls].join('\t')}\n`)
    const { value, done } = await this.#lines.next()
    if (done) throw new Error(`node_reference exited: ${this.#stderr.trim()}`)
    if (value.startsWith('error ')) throw new Error(`node_reference ${path}: ${value.slice(6)}`)
    const [seconds, rows, sum] = value.split(' ')
    return { seconds: Number(seconds), rows: Number(rows), sum: BigInt(sum) }
  }

  close() {
    this.#child.stdin.end()
  }
}
