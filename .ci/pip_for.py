"""Runs pip with the environment markers of another platform and Python.

pip's ``--platform`` and ``--python-version`` choose the wheels of another
machine, but pip still evaluates environment markers (``; platform_system !=
"Windows"``, in requirements.txt and in every package's own requirements)
for the machine it runs on. This runs pip's own command line with its marker
environment set to the target's, so that its resolver answers as pip on that
machine would:

  python .ci/pip_for.py win_amd64 3.11 install --dry-run --platform win_amd64 ...

Used by ``.ci/resolve-platforms``.
"""

import sys

# The marker values of each platform tag pip is asked about (PEP 508's names).
PLATFORMS = {
    'win_amd64': {'os_name': 'nt', 'sys_platform': 'win32', 'platform_system': 'Windows',
                  'platform_machine': 'AMD64', 'platform_release': '10',
                  'platform_version': '10.0.22631'},
    'macosx_12_0_arm64': {'os_name': 'posix', 'sys_platform': 'darwin',
                          'platform_system': 'Darwin', 'platform_machine': 'arm64',
                          'platform_release': '21.6.0', 'platform_version': 'Darwin Kernel'},
}


def marker_environment(platform, python):
  """The marker environment of CPython ``python`` ('3.12') on ``platform`` (a wheel tag)."""
  return {**PLATFORMS[platform], 'implementation_name': 'cpython',
          'platform_python_implementation': 'CPython', 'python_version': python,
          'python_full_version': f'{python}.0', 'implementation_version': f'{python}.0'}


def main(argv):
  platform, python, *pip_args = argv
  environment = marker_environment(platform, python)
  from pip._vendor.packaging import markers  # pylint: disable=import-outside-toplevel
  # Marker.evaluate reads the module's default_environment at each call.
  markers.default_environment = lambda: dict(environment)
  from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel
  return pip_main(pip_args)


if __name__ == '__main__':
  sys.exit(main(sys.argv[1:]))
