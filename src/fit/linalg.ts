/**
 * The small dense linear algebra a least-squares fit needs: the symmetric eigen decomposition
 * (cyclic Jacobi, exact enough for the ≤ 10 parameters of the cost model) and the Student-t
 * quantile for 95 % intervals. Matrices are arrays of rows.
 */

/** Eigen decomposition of a symmetric matrix: `A = V·diag(values)·Vᵀ`, eigenvectors in the COLUMNS of `vectors`. */
export interface SymmetricEigen {
  /** Eigenvalues, descending. */
  values: number[];
  /** `vectors[i][k]`: component i of the eigenvector of `values[k]`. */
  vectors: number[][];
}

/**
 * Eigenvalues and eigenvectors of the symmetric matrix `a` (not modified) by cyclic Jacobi rotations,
 * sorted by descending eigenvalue. Converges to machine precision in a few sweeps for n ≤ 20.
 * @throws Error when `a` is not square.
 */
export function symmetricEigen(a: readonly (readonly number[])[]): SymmetricEigen {
  const n = a.length;
  if (a.some((row) => row.length !== n)) throw new Error(`symmetricEigen needs a square matrix, got ${n} rows of other lengths`);
  const m = a.map((row) => [...row]);
  const v: number[][] = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += m[p][q] * m[p][q];
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        if (m[p][q] === 0) continue;
        const theta = (m[q][q] - m[p][p]) / (2 * m[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const mkp = m[k][p];
          const mkq = m[k][q];
          m[k][p] = c * mkp - s * mkq;
          m[k][q] = s * mkp + c * mkq;
        }
        for (let k = 0; k < n; k++) {
          const mpk = m[p][k];
          const mqk = m[q][k];
          m[p][k] = c * mpk - s * mqk;
          m[q][k] = s * mpk + c * mqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k][p];
          const vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => m[j][j] - m[i][i]);
  return { values: order.map((i) => m[i][i]), vectors: v.map((row) => order.map((i) => row[i])) };
}

/** Standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const q = p < 0.5 ? p : 1 - p;
  const sign = p < 0.5 ? -1 : 1;
  if (q < 0.02425) {
    const r = Math.sqrt(-2 * Math.log(q));
    return (
      sign *
      -(
        (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
        ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1)
      )
    );
  }
  const r = (q - 0.5) * (q - 0.5);
  const x =
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * (q - 0.5)) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  return sign === -1 ? x : -x;
}

/**
 * Two-sided Student-t quantile t_{1−α/2, dof}, e.g. `tQuantile(0.975, 10)` ≈ 2.228 (Cornish–Fisher
 * expansion of the normal quantile, within 0.2 % for dof ≥ 3). Infinity when dof < 1.
 */
export function tQuantile(p: number, dof: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`tQuantile needs 0 < p < 1, got ${p}`);
  if (dof < 1) return Infinity;
  const z = normalQuantile(p);
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return (
    z +
    (z3 + z) / (4 * dof) +
    (5 * z5 + 16 * z3 + 3 * z) / (96 * dof ** 2) +
    (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * dof ** 3)
  );
}
