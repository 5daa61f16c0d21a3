/** The worker-thread entry point that piscina loads (see pool.ts). */
import { runTask, type Task, type TaskOutcome } from './tasks.js'

export default function run(task: Task): Promise<TaskOutcome> {
  return runTask(task)
}
