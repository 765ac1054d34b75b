"""`attnlab config {list,show}`: the configs and comparison suites shipped with attnlab."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "config", help="list the shipped configs and suites, or print one",
        description="The experiment configs (one commented YAML per paper setup) and comparison "
        "suites shipped with attnlab. `attnlab train NAME` trains a shipped config of any task "
        "by its name; `attnlab config show NAME > my.yaml` copies one "
        "to edit.")
    commands = parser.add_subparsers(dest="config_command", required=True, metavar="COMMAND")

    listing = commands.add_parser("list", help="each shipped config and suite with its first "
                                  "comment line")
    listing.set_defaults(func=run_list)

    show = commands.add_parser("show", help="print a shipped config or suite, comments included",
                               description="Print the YAML of a shipped config or suite as it "
                               "is, comments included: `attnlab config show NAME > my.yaml` "
                               "gives a template to edit and train with `attnlab train my.yaml`.")
    show.add_argument("name", metavar="NAME", help="a name from `attnlab config list`")
    show.set_defaults(func=run_show)


def run_list(args: argparse.Namespace) -> int:
    from attnlab import configs

    sections = [
        ("Experiment configs (attnlab train NAME, whatever its task):", configs.config_names(),
         configs.config_path),
        ("Comparison suites (attnlab compare NAME --dir DIR):", configs.suite_names(),
         configs.suite_path),
    ]
    width = max(len(name) for _, names, _ in sections for name in names)
    for title, names, path_of in sections:
        print(title)
        for name in names:
            print(f"  {name:<{width}}  {configs.summary(path_of(name))}".rstrip())
        print()
    print("attnlab config show NAME prints one, comments included (> my.yaml: a template).")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from attnlab import configs

    sys.stdout.write(configs.shipped_file(args.name).read_text(encoding="utf-8"))
    return 0
