# lit configuration for stencilc. Parameters (lit -D...):
#   stencilc=PATH   the compiler under test (default build/stencilc)
#   sanitized=1     the compiler is the ASan/UBSan build: skip run tests
import os, shutil
import lit.formats

config.name = 'stencilc'
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = ['.stn', '.test']
config.excludes = ['Inputs']
config.test_source_root = os.path.dirname(__file__)
root = os.path.abspath(os.path.join(config.test_source_root, '..', '..'))
build = os.path.join(root, 'build')

stencilc = lit_config.params.get('stencilc', os.path.join(build, 'stencilc'))
llvm_bin = '/usr/lib/llvm-14/bin'
path = os.environ.get('PATH', '')
if os.path.isdir(llvm_bin):
    path = llvm_bin + os.pathsep + path
# nvcc where CUDA installs it, for the tests that compile CUDA (and CMake's CUDA)
if not shutil.which('nvcc') and os.path.exists('/usr/local/cuda/bin/nvcc'):
    path = path + os.pathsep + '/usr/local/cuda/bin'
config.environment['PATH'] = path
for var in ('HOME', 'TMPDIR'):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment['OMP_NUM_THREADS'] = '2'
# MPI ranks that wait yield the core (the tests run beside each other on few cores)
config.environment['OMPI_MCA_mpi_yield_when_idle'] = '1'
# ASan reports leaks at exit; the compiler frees its arenas at exit anyway.
config.environment['UBSAN_OPTIONS'] = 'print_stacktrace=1:halt_on_error=1'
# The compiler keeps its AST and IR (arena nodes holding growable arrays)
# until the process exits, by design; leak checking would only list them.
# ASan's memory-error checks and UBSan stay on.
config.environment['ASAN_OPTIONS'] = 'detect_leaks=0:abort_on_error=0'

config.substitutions.append(('%stencilc', stencilc))
config.substitutions.append(('%root', root))
config.substitutions.append(('%examples', os.path.join(root, 'examples')))
config.substitutions.append(('%fieldcmp', os.path.join(build, 'tools', 'fieldcmp')))
config.substitutions.append(('%numcmp', os.path.join(root, 'tests', 'tools', 'numcmp.sh')))
config.substitutions.append(('%refcc', 'cc -O2 -fopenmp -o'))
config.substitutions.append(('%ref', os.path.join(root, 'tests', 'ref')))

if lit_config.params.get('sanitized') == '1':
    config.available_features.add('sanitized')
if os.path.exists(os.path.join(build, 'tools', 'pngdump')):
    config.available_features.add('png')
config.substitutions.append(('%pngdump', os.path.join(build, 'tools', 'pngdump')))
if shutil.which('nvcc') or os.path.exists('/usr/local/cuda/bin/nvcc'):
    config.available_features.add('nvcc')

# Distributed runs (stencilc --mpi): Open MPI's mpirun, and the MPI runtime built.
mpirun = ['mpirun', '--oversubscribe', '--bind-to', 'none']
if os.geteuid() == 0:
    mpirun.append('--allow-run-as-root')
config.substitutions.append(('%mpirun', ' '.join(mpirun)))
config.substitutions.append(('%mpicheck', os.path.join(root, 'tests', 'tools', 'mpi-check.sh')))
if shutil.which('mpirun') and os.path.exists(os.path.join(build, 'libstn_mpi.a')):
    config.available_features.add('mpi')

# Data in and out (tests/lit/io): the runtime built with HDF5, a python3
# with numpy and h5py (Debian's python3-h5py, python3-numpy), ParaView's
# Python module (python3-paraview) when installed.
import subprocess
try:
    with open(os.path.join(build, 'config')) as cfg:
        if '-lhdf5' in cfg.read():
            config.available_features.add('hdf5')
except OSError:
    pass
py3 = None
for cand in ('/usr/bin/python3', shutil.which('python3')):
    if cand and subprocess.run([cand, '-c', 'import numpy, h5py'], capture_output=True).returncode == 0:
        py3 = cand
        break
if py3:
    config.available_features.add('h5py')
config.substitutions.append(('%py3', py3 or 'python3'))
# bench/an5d/fitmodel.py (the time model's fit) needs scipy (python3-scipy)
if py3 and subprocess.run([py3, '-c', 'import scipy.optimize'], capture_output=True).returncode == 0:
    config.available_features.add('scipy')
if py3 and subprocess.run([py3, '-c', 'import paraview.simple'], capture_output=True).returncode == 0:
    config.available_features.add('paraview')
config.substitutions.append(('%killrestart', os.path.join(root, 'tests', 'lit', 'run', 'Inputs', 'kill-restart.sh')))
