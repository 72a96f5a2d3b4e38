# Files in dtypes the program does not write itself: f's components
# stacked ([3, N, M]), u as float32, k as int64 (tests/lit/io/formats.test).
import sys, numpy as np
N, M = 13, 11
i, j = np.meshgrid(np.arange(N), np.arange(M), indexing='ij')
np.save('fall.npy', np.stack([np.load('f%d.npy' % q) for q in range(3)]))
np.save('u32.npy', np.load('u.npy').astype(np.float32))
np.save('k64.npy', (i * 100 + j).astype(np.int64))
