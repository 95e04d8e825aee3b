/**
 * The one sentence every prediction-versus-measurement section carries (issue #13): on the
 * simulator, prediction and measurement share a cost model, so their agreement is partly by
 * construction; on a real vLLM, the gap between them is the model's error on this card.
 */

/** What the sentence needs to know about the target. */
export interface CircularityTarget {
  /** The numbers come from LoadLab's simulator. */
  simulated: boolean;
  /** The server's reported version, when known (`GET /version`). */
  config?: { version?: string };
  /** The sentence is about saved runs (lesson 07), not a server answering now; default false. */
  saved?: boolean;
}

/**
 * Simplified-Chinese sentence for a prediction-versus-measurement section, computed from the
 * target: simulated → the agreement is partly by construction (same step-time model,
 * `src/sim/engine/cost.ts`, set from published figures); real → the difference is the model's
 * error on this server, and the prediction is the one to question.
 */
export function circularityNote(target: CircularityTarget): string {
  if (target.simulated) {
    const who = target.saved ? '这些保存的运行来自模拟器' : '这台服务器是模拟器';
    return (
      `注意：${who}，` +
      '预测和测量用的是同一个每步耗时模型（`src/sim/engine/cost.ts`，按公开数据设定，未在真卡上校准），' +
      '所以两者吻合有一部分是构造使然，只说明排队、分块、抢占这些规则按预期起了作用，不能证明耗时模型对真实 GPU 成立；' +
      '差异来自调度细节和这台机器的 CPU。要检验预测，请对着真实的 vLLM 重跑这一课（`docs/autodl.md`）。'
    );
  }
  const v = target.config?.version ? ` ${target.config.version}` : '';
  const who = target.saved ? '这些保存的运行来自真实的 vLLM' : '这台服务器是真实的 vLLM';
  return (
    `${who}${v}：预测来自模拟器的耗时模型（按公开数据为 RTX 4090 设定），` +
    '所以测量与预测之差就是这个模型在你这张卡上的误差——不吻合时，该怀疑的是预测，不是测量。'
  );
}
