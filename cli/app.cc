// app.cc — the house setup of CLI11 (app.h): help layout, error wording, validators, and the
// layer over CLI::App, CLI::Option and CLI::Validator through which the programs use them. The
// one translation unit that compiles CLI11.
#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "flash/common/split.h"

namespace pdl::cli {
namespace {

// The option as the user writes it: "-l, --long VALUE".
std::string left_column(const CLI::Option* o) {
  std::string s;
  for (const std::string& n : o->get_snames()) s += (s.empty() ? "-" : ", -") + n;
  for (const std::string& n : o->get_lnames()) s += (s.empty() ? "--" : ", --") + n;
  if (o->get_items_expected_max() != 0 && !o->get_type_name().empty())
    s += " " + o->get_type_name();
  return s;
}

// CLI11's help, drawn in the common layout of usage.h.
class Formatter : public CLI::FormatterBase {
 public:
  explicit Formatter(const Program* program) : program_(program) {}
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    HelpText h;
    h.program = program_->name;
    h.usage = program_->usage;
    h.description = program_->description;
    h.footer = program_->footer;
    for (const CLI::Option* o : app->get_options()) {
      if (!o->nonpositional() || o->get_group().empty()) continue;  // hidden
      const std::string title = o->get_group() == "Options" ? "options" : o->get_group();
      auto g = std::find_if(h.groups.begin(), h.groups.end(),
                            [&](const HelpGroup& x) { return x.title == title; });
      if (g == h.groups.end()) g = h.groups.insert(h.groups.end(), HelpGroup{title, {}});
      std::string text = o->get_description();
      if (!o->get_default_str().empty()) {  // on the last line if it fits in 98 columns
        const std::string dflt = "(default: " + o->get_default_str() + ")";
        const size_t nl = text.rfind('\n');
        const size_t last = text.size() - (nl == std::string::npos ? 0 : nl + 1);
        text += (last + 1 + dflt.size() > 76 ? "\n" : " ") + dflt;
      }
      g->items.push_back({left_column(o), text});
    }
    return render_help(h);
  }

 private:
  const Program* program_;
};

std::string shown(const CLI::Option* o) {
  return o->get_lnames().empty() ? "-" + o->get_snames().front() : "--" + o->get_lnames().front();
}

}  // namespace

Validator::Validator(Check check, std::string description)
    : v_(std::make_shared<const CLI::Validator>(std::move(check), std::move(description))) {}

std::string Validator::operator()(std::string& value) const { return (*v_)(value); }

Option* Option::type_name(std::string name) {
  o_->type_name(std::move(name));
  return this;
}

Option* Option::check(const Validator& v) {
  o_->check(v.get());
  return this;
}

Option* Option::capture_default_str() {
  o_->capture_default_str();
  return this;
}

Option* Option::default_str(std::string value) {
  o_->default_str(std::move(value));
  return this;
}

Option* Option::group(std::string name) {
  o_->group(name);
  return this;
}

Option* Option::required() {
  o_->required();
  return this;
}

Option* Option::excludes(Option* other) {
  o_->excludes(other->o_);
  return this;
}

size_t Option::count() const { return o_->count(); }

Option* App::keep(CLI::Option* o) {
  options_.push_back(std::make_unique<Option>(o));
  return options_.back().get();
}

template <typename T>
Option* App::add_option(std::string name, T& v, std::string help) {
  return keep(app_->add_option(std::move(name), v, std::move(help)));
}
// The variable types the programs use (app.h).
template Option* App::add_option(std::string, std::string&, std::string);
template Option* App::add_option(std::string, std::vector<std::string>&, std::string);
template Option* App::add_option(std::string, uint64_t&, std::string);
template Option* App::add_option(std::string, uint32_t&, std::string);
template Option* App::add_option(std::string, int64_t&, std::string);
template Option* App::add_option(std::string, int&, std::string);
template Option* App::add_option(std::string, double&, std::string);

Option* App::add_flag(std::string name, bool& v, std::string help) {
  return keep(app_->add_flag(std::move(name), v, std::move(help)));
}

Option* App::add_flag(std::string name, const std::string& help) {
  return keep(app_->add_flag(std::move(name), help));  // const: CLI11 takes it as the help
}

size_t App::count(std::string name) const { return app_->count(name); }

CommandLine::CommandLine(Program program)
    : program_(std::move(program)),
      app_(std::make_unique<CLI::App>("", program_.name)),
      front_(app_.get()) {
  app_->formatter(std::make_shared<Formatter>(&program_));
  app_->set_help_flag("-h,--help", "this help");
}

CommandLine::~CommandLine() = default;

std::string CommandLine::help() const { return app_->help(); }

void CommandLine::apply_repeats() {
  for (CLI::Option* o : app_->get_options()) {
    if (!o->nonpositional() || o == app_->get_help_ptr()) continue;
    if (o->get_items_expected_max() == 0) o->disable_flag_override();  // "--quick=1"
    if (o->get_items_expected_max() <= 1)
      o->multi_option_policy(program_.repeats == Repeats::kRefused
                                 ? CLI::MultiOptionPolicy::Throw
                                 : CLI::MultiOptionPolicy::TakeLast);
  }
}

int CommandLine::parse(int argc, const char* const* argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  return parse(words);
}

int CommandLine::parse(const std::vector<std::string>& words) {
  apply_repeats();
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11's order
  try {
    app_->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return report(e);
  }
  return -1;
}

// CLI11's errors in the house wording where they concern the command line's shape (given
// twice, missing value, unknown option); the validators' and the programs' own messages as
// they are ("--scale: expected a number in ...").
int CommandLine::report(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    for (const CLI::Option* o : app_->get_options())
      if (o->nonpositional() && o->count() > 1 && o->get_items_expected_max() <= 1)
        return error(shown(o) + " given twice");
    const std::string flag_override = " was given a disallowed flag override";
    if (what.size() > flag_override.size() &&
        what.compare(what.size() - flag_override.size(), flag_override.size(), flag_override) == 0)
      return error("--" + what.substr(0, what.size() - flag_override.size()) + " takes no value");
    if (what.find(" required ") != std::string::npos && what.find(" missing") != std::string::npos) {
      const std::string name = what.substr(0, what.find(':'));
      const CLI::Option* o = app_->get_option_no_throw(name);
      return error(name + " needs a value" +
                   (o && !o->get_type_name().empty() ? " (" + o->get_type_name() + ")" : ""));
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::vector<std::string> extra = app_->remaining();
    if (!extra.empty())
      return error(extra[0].size() > 1 && extra[0][0] == '-' ? "unknown option " + extra[0]
                                                             : "unexpected argument '" + extra[0] + "'");
  }
  return error(what);
}

bool parse_decimal(const std::string& s, uint64_t* v) {
  if (s.empty()) return false;
  uint64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const unsigned d = unsigned(c - '0');
    if (r > (UINT64_MAX - d) / 10) return false;
    r = r * 10 + d;
  }
  *v = r;
  return true;
}

Validator integer(uint64_t lo, uint64_t hi) {
  return Validator(
      [lo, hi](std::string& s) -> std::string {
        uint64_t v = 0;
        if (parse_decimal(s, &v) && v >= lo && v <= hi) return "";
        return "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
               "], got '" + s + "'";
      },
      "");
}

Validator number(double lo, double hi, bool lo_open) {
  return Validator(
      [lo, hi, lo_open](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double x = s.empty() ? 0 : std::strtod(s.c_str(), &end);
        if (!s.empty() && errno == 0 && *end == '\0' && std::isfinite(x) && x <= hi &&
            (x > lo || (!lo_open && x == lo)))
          return "";
        char buf[96];
        std::snprintf(buf, sizeof buf, "expected a number in %s%g, %g], got '",
                      lo_open ? "(" : "[", lo, hi);
        return buf + s + "'";
      },
      "");
}

Validator one_of(std::vector<std::string> allowed) {
  return Validator(
      [allowed](std::string& s) -> std::string {
        if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return "";
        std::string list;
        for (size_t i = 0; i < allowed.size(); i++)
          list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
        return "expected " + list + ", got '" + s + "'";
      },
      "");
}

Validator list_of(std::vector<std::string> allowed, std::string what) {
  return Validator(
      [allowed, what](std::string& s) -> std::string {
        const std::vector<std::string> items = split_list(s);
        if (items.empty()) return "no " + what + " given";
        for (const std::string& i : items)
          if (std::find(allowed.begin(), allowed.end(), i) == allowed.end()) {
            std::string list;
            for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
            return "unknown " + what + " '" + i + "' (" + list + ")";
          }
        return "";
      },
      "");
}

Validator non_empty(std::string what) {
  return Validator(
      [what](std::string& s) -> std::string { return s.empty() ? "empty " + what : ""; }, "");
}

Validator is_member(std::initializer_list<const char*> values) {
  return Validator(std::make_shared<const CLI::Validator>(CLI::IsMember(values)));
}

Validator is_member(std::initializer_list<int> values) {
  return Validator(std::make_shared<const CLI::Validator>(CLI::IsMember(values)));
}

Validator existing_directory() {
  return Validator(
      std::make_shared<const CLI::Validator>(CLI::Validator(CLI::ExistingDirectory).description("")));
}

}  // namespace pdl::cli
