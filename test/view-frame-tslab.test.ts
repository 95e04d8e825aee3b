/**
 * The notebook path of the lazy danfojs load: a real tslab kernel (driven with jupyter_client, as
 * JupyterLab drives it) imports `./src/index` from notebooks/, compiling src/ with tslab's own
 * settings. Importing loads no danfojs / TensorFlow.js; the first `recordsToDataFrame` does.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths';

const ROOT = packageRoot();
const DRIVER = String.raw`
import sys, json
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name='tslab', cwd=sys.argv[1])
def run(code):
    msg_id = kc.execute(code)
    out, err = [], []
    while True:
        m = kc.get_iopub_msg(timeout=300)
        if m['parent_header'].get('msg_id') != msg_id: continue
        t, c = m['msg_type'], m['content']
        if t == 'stream': (err if c['name'] == 'stderr' else out).append(c['text'])
        elif t == 'execute_result': out.append(c['data'].get('text/plain', ''))
        elif t == 'error': err.append(c['ename'] + ': ' + c['evalue'])
        elif t == 'status' and c['execution_state'] == 'idle': return {'out': ''.join(out).strip(), 'err': ''.join(err)}
try:
    cells = json.loads(sys.argv[2])
    print(json.dumps([run(c) for c in cells]))
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
`;

describe('recordsToDataFrame in a tslab kernel', () => {
  it('importing the API loads no danfojs; the first DataFrame does', { timeout: 300_000 }, () => {
    const cells = [
      "import * as ll from './src/index';\n" +
        'const danfoFiles = () => Object.keys(require.cache).filter((k) => /[\\\\/](danfojs|@tensorflow)[\\\\/]/.test(k)).length;\n' +
        'danfoFiles()',
      'const df = ll.recordsToDataFrame([]);\nJSON.stringify([df.shape, danfoFiles() > 0])',
    ];
    const env = { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` };
    const raw = execFileSync('/usr/bin/python3', ['-c', DRIVER, join(ROOT, 'notebooks'), JSON.stringify(cells)], {
      env,
      encoding: 'utf8',
      timeout: 300_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [imported, framed] = JSON.parse(raw.trim().split('\n').pop()!) as Array<{ out: string; err: string }>;
    expect(imported.err).toBe(''); // tslab compiled src/ without a type error
    expect(imported.out).toBe('0');
    expect(framed.err).toBe('');
    expect(framed.out).toContain('[[0,23],true]');
  });
});
