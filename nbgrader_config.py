"""nbgrader configuration for the course (read by nbgrader; plain settings only).

No assignment is pinned: name it on the command line (`nbgrader autograde ch04_attention`).
The grader reads the plain `c.Section.name = value` lines of this file and never runs it.
"""
c = get_config()  # noqa: F821  (nbgrader injects get_config)

c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.ExecutePreprocessor.timeout = 120

# --- the hardened grader's doors (`python -m autograder init --merge` adds this block to a course) ---
# nbgrader's own doors (`nbgrader autograde ch04_attention`, formgrader's Autograde button) grade this
# chapter through the hardened grader: its sandboxed step stands where nbgrader's Execute stands, and
# nbgrader's SaveAutoGrades, late penalties and export do the rest with its scores. Any other assignment
# of the course is still executed by nbgrader's Execute. FlagForReview marks the cells of a notebook that
# needs a person, with the reason as the comment formgrader shows.
c.Autograde.autograde_preprocessors = [
    "autograder.run.autograde.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "autograder.run.autograde.FlagForReview",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# Feedback pages never show a hidden test, nor why the grader marked a notebook for review (that is the
# instructor's in formgrader: a comment you write there is what the student reads), and student markdown is
# rendered sanitised (no scripts), in generate_feedback and in formgrader alike.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "autograder.run.autograde.ForStudents",
    "autograder.run.autograde.HideHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.HTMLExporter.sanitize_html = True
# --- end of the hardened grader's doors ---

# `nbgrader validate` cuts each line of a failure at this width (default 90, as in a student's folder); the
# visible tests' messages fit in 90 columns (advice first, evidence on lines of its own), and this only
# widens the code lines shown beside them in the instructor's folder.
c.Validator.width = 200
