"""The noise estimate's effective degrees of freedom (src/track.rs,
NoiseEstimate::degrees_of_freedom): for each difference order k, the
median-of-squares estimate of sigma^2 over overlapping unit-norm
differences of white noise (40 series of 60 frames, 3,000 repeats), and
M / nu, where nu = 2 / (its relative variance) and M the differences.
Run: python3 scripts/noise_dof.py (NumPy); seed 1.
"""
import numpy as np
from math import comb
rng=np.random.default_rng(1)
m=0.4549364231195727
for k in range(3,9):
    w=np.array([(-1)**i*comb(k,i) for i in range(k+1)],float); w/=np.linalg.norm(w)
    T=60; S=40
    ests=[]
    for rep in range(3000):
        x=rng.standard_normal((S,T))
        d=np.stack([x[:,i:i+k+1]@w for i in range(T-k)],axis=1).ravel()
        ests.append(np.median(d*d)/m)
    ests=np.array(ests); M=S*(T-k)
    rv=ests.var()/ests.mean()**2
    print(k, M, ests.mean(), 2/rv, M/(2/rv))
