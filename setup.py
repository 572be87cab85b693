"""What pyproject.toml cannot say: the pipelines of ``pipelines/`` are package data of the
wheel, as the package ``dolb.pipelines`` (``packages.find`` finds no package whose folder
is mapped from elsewhere). Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["dolb*"]), "dolb.pipelines"],
    package_dir={"dolb.pipelines": "pipelines"},
    package_data={"dolb.pipelines": ["*.toml"]},
)
